from trytond.pool import PoolMeta

from .common import DraftlineMixin


class Sale(DraftlineMixin, metaclass=PoolMeta):
    __name__ = 'sale.sale'
    _draftline_sequence_field = 'draftline_sale_sequence'

    def _get_invoice(self):
        invoice = super()._get_invoice()
        invoice.warehouse = self.warehouse
        return invoice
