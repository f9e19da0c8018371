"""The draftline provenance fields shared by purchases and sales.

draftline_key: the idempotency key of the draftline call that created the
document; unique per company (a database constraint), NULL for documents made
by people. draftline_number: draftline's document number (PO-SBY-000001),
given from the warehouse's draftline sequence when a draft with a key is
created without one, and copied into Tryton's own `number` so that the
client shows it and quotation keeps it (Tryton only numbers documents that
have no number yet).
"""


from trytond import backend
from trytond.exceptions import UserError
from trytond.i18n import gettext
from trytond.model import Unique, fields
from trytond.model.exceptions import AccessError
from trytond.model.modelsql import SQLConstraintError
from trytond.pool import Pool
from trytond.pyson import Eval, If
from trytond.transaction import Transaction, without_check_access

from .access import is_draftline_user
from .configuration import run_url

PROVENANCE = [
    'draftline_key', 'draftline_number', 'draftline_client_ref',
    'drafted_by_agent_run', 'drafted_on_behalf_of', 'drafted_by_tool_call']


class DraftlineMixin:
    __slots__ = ()
    # Not readonly on the field: REST creates them (Tryton refuses to write
    # readonly fields from outside); the views show them read-only.
    draftline_key = fields.Char(
        "Draftline Key", strip=False,
        help="The idempotency key of the draftline call that created this "
        "document (unique per company). Empty for documents made by people.")
    draftline_number = fields.Char(
        "Draftline Number",
        help="The number draftline gave this document (e.g. PO-SBY-000001).")
    draftline_client_ref = fields.Char(
        "Client Reference",
        help="The caller's own reference of the draft (client_ref).")
    drafted_by_agent_run = fields.Char(
        "Drafted by Agent Run",
        help="The agent run (X-Agent-Run-Id) that drafted this document.")
    drafted_on_behalf_of = fields.Char(
        "Drafted on Behalf of",
        help="The person the agent acted for (token subject).")
    drafted_by_tool_call = fields.Char(
        "Drafted by Tool Call",
        help="The tool call (X-Tool-Call-Id) that drafted this document.")
    drafted_by_agent = fields.Function(
        fields.Boolean(
            "Drafted by Agent",
            help="Drafted by an AI agent through draftline: review it before "
            "moving it on."),
        'get_drafted_by_agent', searcher='search_drafted_by_agent')
    drafted_by_agent_run_url = fields.Function(
        fields.Char(
            "Agent Run",
            help="The agent run on draftline's review pages: every tool "
            "call it made, refused and failed ones included."),
        'get_drafted_by_agent_run_url')
    draftline_decided_by = fields.Function(
        fields.Char(
            "Decided by",
            help="Who moved this agent draft on from draft (quoted, "
            "confirmed or cancelled it), as far as Tryton records it: the "
            "Tryton user who last changed the document (its write_uid).",
            states={'invisible': Eval('state') == 'draft'}),
        'get_draftline_decided_by')

    # the sequence field of the warehouse (stock.location) and the message
    _draftline_sequence_field = None

    @classmethod
    def __setup__(cls):
        super().__setup__()
        t = cls.__table__()
        cls._sql_constraints += [
            ('draftline_key_unique',
                Unique(t, t.company, t.draftline_key),
                'draftline.msg_draftline_key_unique'),
            ('draftline_number_unique',
                Unique(t, t.company, t.draftline_number),
                'draftline.msg_draftline_number_unique'),
            ]

    @classmethod
    def view_attributes(cls):
        return super().view_attributes() + [
            ('//group[@id="draftline_agent"]', 'states', {
                    'invisible': ~Eval('drafted_by_agent'),
                    }),
            ('/tree', 'visual',
                If(Eval('drafted_by_agent', False), 'warning', '')),
            ]

    def get_drafted_by_agent(self, name):
        return bool(self.draftline_key)

    def get_drafted_by_agent_run_url(self, name):
        return run_url(self.drafted_by_agent_run)

    @classmethod
    def get_draftline_decided_by(cls, records, name):
        User = Pool().get('res.user')
        decided = [r for r in records
            if r.draftline_key and r.state != 'draft' and r.write_uid]
        # Anyone who may read the document may read who changed it last.
        with without_check_access():
            logins = {u.id: u.login
                for u in User.browse({r.write_uid.id for r in decided})}
        result = {r.id: None for r in records}
        for record in decided:
            result[record.id] = logins.get(record.write_uid.id)
        return result

    @classmethod
    def _draftline_four_eyes(cls, records):
        """Refuses to move on an agent draft for the person the agent acted
        for: another person with the purchase (sale) group must quote or
        confirm it, as on draftline's review pages."""
        pool = Pool()
        User = pool.get('res.user')
        user_id = Transaction().user
        if not user_id:
            return
        with without_check_access():
            login = User(user_id).login
        for record in records:
            if (record.draftline_key and record.state in {'draft', 'quotation'}
                    and record.drafted_on_behalf_of == login):
                raise UserError(gettext(
                        'draftline.msg_draftline_four_eyes',
                        document=record.rec_name, person=login))

    @classmethod
    def quote(cls, records):
        cls._draftline_four_eyes(records)
        super().quote(records)

    @classmethod
    def confirm(cls, records):
        cls._draftline_four_eyes(records)
        super().confirm(records)

    @classmethod
    def search_drafted_by_agent(cls, name, clause):
        _, operator, value = clause[:3]
        positive = (operator == '=') == bool(value)
        return [('draftline_key', '!=' if positive else '=', None)]

    @classmethod
    def preprocess_values(cls, mode, values):
        pool = Pool()
        Location = pool.get('stock.location')
        values = super().preprocess_values(mode, values)
        if mode == 'create':
            if values.get('draftline_key') and not values.get(
                    'draftline_number'):
                warehouse = values.get('warehouse')
                if not warehouse:
                    raise UserError(gettext(
                            'draftline.msg_draftline_warehouse_required'))
                warehouse = Location(warehouse)
                sequence = getattr(warehouse, cls._draftline_sequence_field)
                if not sequence:
                    raise UserError(gettext(
                            'draftline.msg_draftline_sequence_missing',
                            warehouse=warehouse.rec_name))
                values['draftline_number'] = sequence.get()
            if values.get('draftline_number') and not values.get('number'):
                values['number'] = values['draftline_number']
        return values

    @classmethod
    def create(cls, vlist):
        # The draftline user makes agents' drafts only, each with its key:
        # not a document without provenance (a Duplicate clears it, an
        # import may leave it out).
        if (any(not v.get('draftline_key') for v in vlist)
                and is_draftline_user()):
            raise AccessError(gettext(
                    'draftline.msg_draftline_key_required',
                    model=cls.__names__()['model']))
        try:
            return super().create(vlist)
        except SQLConstraintError as exception:
            # Two drafts created at the same time may draw the same number
            # where the database cannot lock the sequence (SQLite): make the
            # request retry in a new transaction (trytond retries
            # DatabaseOperationalError [database] retry times), which draws
            # the next number. A taken draftline_key is still reported.
            if (exception.message == gettext(
                        'draftline.msg_draftline_number_unique')
                    and any(v.get('draftline_key')
                        and not v.get('draftline_number') for v in vlist)):
                raise backend.DatabaseOperationalError(
                    'draftline number drawn twice, retry') from exception
            raise

    @classmethod
    def copy(cls, records, default=None):
        default = default.copy() if default is not None else {}
        for name in PROVENANCE:
            default.setdefault(name, None)
        return super().copy(records, default=default)



