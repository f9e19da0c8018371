from trytond.model import fields
from trytond.pyson import Eval, Id
from trytond.pool import PoolMeta


class Location(metaclass=PoolMeta):
    __name__ = 'stock.location'
    draftline_purchase_sequence = fields.Many2One(
        'ir.sequence.strict', "Draftline Purchase Sequence",
        domain=[
            ('sequence_type', '=', Id('purchase', 'sequence_type_purchase')),
            ],
        states={
            'invisible': Eval('type') != 'warehouse',
            },
        help="Numbers the purchase drafts draftline creates for this "
        "warehouse (branch), e.g. PO-SBY-000001.")
    draftline_sale_sequence = fields.Many2One(
        'ir.sequence.strict', "Draftline Sale Sequence",
        domain=[
            ('sequence_type', '=', Id('sale', 'sequence_type_sale')),
            ],
        states={
            'invisible': Eval('type') != 'warehouse',
            },
        help="Numbers the quote drafts draftline creates for this "
        "warehouse (branch), e.g. QT-BDG-000001.")
