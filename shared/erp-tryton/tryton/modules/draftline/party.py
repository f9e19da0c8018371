from trytond.model import fields
from trytond.pool import PoolMeta


class Party(metaclass=PoolMeta):
    __name__ = 'party.party'
    draftline_credit_hold = fields.Char(
        "Credit Hold",
        help="Why the customer is on credit hold; while set, draftline "
        "refuses to draft quotes for it. Empty when not on hold.")
