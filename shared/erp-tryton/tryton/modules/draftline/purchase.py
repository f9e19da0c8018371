from trytond.pool import PoolMeta

from .common import DraftlineMixin


class Purchase(DraftlineMixin, metaclass=PoolMeta):
    __name__ = 'purchase.purchase'
    _draftline_sequence_field = 'draftline_purchase_sequence'

    def _get_invoice(self):
        invoice = super()._get_invoice()
        invoice.warehouse = self.warehouse
        return invoice
