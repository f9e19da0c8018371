from trytond.model import fields
from trytond.pool import PoolMeta
from trytond.pyson import Eval


class Invoice(metaclass=PoolMeta):
    __name__ = 'account.invoice'
    # The branch of an invoice or bill: draftline filters receivables and
    # payables by it. Filled from the sale or purchase it comes from.
    warehouse = fields.Many2One(
        'stock.location', "Warehouse", ondelete='RESTRICT',
        domain=[('type', '=', 'warehouse')],
        states={
            'readonly': Eval('state') != 'draft',
            },
        help="The warehouse (branch) the invoice belongs to.")
