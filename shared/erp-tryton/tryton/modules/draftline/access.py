"""The draftline user's access: what access.xml grants its group.

Tryton's own rule (trytond/ir/model.py, ModelAccess.get_access) is a union:
a user gets, per model, the most that any `ir.model.access` record of one
of its groups or with no group allows, and a model that no record names at
all is open to everyone: read, write, create and delete. In trytond 8.0
that leaves most models (235 of 374 in this database) writable by
a user in no group, among them `res.user-res.group` (so a user can add
itself to any group), `res.user.application`, `ir.session`, `ir.model.data`,
`ir.note`, `ir.attachment`, `party.party`, the sequences and the
configurations; and Tryton's REST API serves every model.

For a member of group `draftline` this module narrows the rule:
- write, create and delete: only what the records of group draftline grant;
- read: what they grant, and what records with no group grant everyone
  (Tryton's "every user may read this": company, currency, units, ...);
- a model that no such record names is closed to it (not open);
- records of other groups do not count, so adding the draftline user to
  another group by mistake grants it no model access (a button restricted
  to a group, like purchase Process, and field access still follow
  Tryton's rule: keep the draftline user in group draftline only).
A model's access also follows the models of its `__access__` fields (a line
follows its document), as in Tryton's rule. Everyone else keeps Tryton's
rule unchanged.
"""
from sql import Literal, Null
from sql.aggregate import Max
from sql.conditionals import Case

from trytond.cache import Cache
from trytond.pool import Pool, PoolMeta
from trytond.transaction import Transaction, without_check_access

PERMS = ['read', 'write', 'create', 'delete']


def draftline_group():
    "The id of group draftline, or None before the module's data is loaded"
    ModelData = Pool().get('ir.model.data')
    # get_id searches ir.model.data, whose access check would come back here
    with without_check_access():
        try:
            return ModelData.get_id('draftline', 'group_draftline')
        except KeyError:
            return None


def is_draftline_user():
    "Whether the transaction's user is a member of group draftline"
    User = Pool().get('res.user')
    if Transaction().user == 0:
        # root (trytond 8.0 has no administrator flag on users)
        return False
    group = draftline_group()
    return group is not None and group in User.get_groups()


class ModelAccess(metaclass=PoolMeta):
    __name__ = 'ir.model.access'
    _draftline_access_cache = Cache(
        'ir_model_access.draftline_get_access', context=False)

    @classmethod
    def get_access(cls, models):
        if not is_draftline_user():
            return super().get_access(models)
        return cls._draftline_get_access(models, draftline_group())

    @classmethod
    def _draftline_get_access(cls, models, group):
        pool = Pool()
        access, missing = {}, []
        for model in models:
            cached = cls._draftline_access_cache.get((group, model))
            if cached is None:
                missing.append(model)
            else:
                access[model] = cached
        if not missing:
            return access

        # A model's access also follows the models of its __access__ fields
        # (a line follows its document), as in Tryton's own rule.
        def linked(Model, names):
            if Model.__name__ in names:
                return
            names.append(Model.__name__)
            for field_name in Model.__access__:
                linked(getattr(Model, field_name).get_target(), names)
        model2models = {}
        for model in missing:
            model2models[model] = []
            linked(pool.get(model), model2models[model])
        all_models = sorted(set(sum(model2models.values(), [])))

        table = cls.__table__()
        ours = table.group == group
        columns = [Max(Case((
                        (ours | (table.group == Null))
                        & (table.perm_read == Literal(True)), 1),
                    else_=0))]
        for perm in PERMS[1:]:
            columns.append(Max(Case((
                            ours & (getattr(table, f'perm_{perm}')
                                == Literal(True)), 1),
                        else_=0)))
        cursor = Transaction().connection.cursor()
        cursor.execute(*table.select(
                table.model, *columns,
                where=table.model.in_(all_models)
                & (table.active == Literal(True))
                & (ours | (table.group == Null)),
                group_by=table.model))
        granted = {m: dict(zip(PERMS, perms)) for m, *perms in cursor}
        for model in missing:
            maccess = {
                perm: bool(max(
                        (granted[m][perm] for m in model2models[model]
                            if m in granted),
                        default=0))
                for perm in PERMS}
            cls._draftline_access_cache.set((group, model), maccess)
            access[model] = maccess
        return access

    @classmethod
    def on_modification(cls, mode, records, field_names=None):
        super().on_modification(mode, records, field_names=field_names)
        cls._draftline_access_cache.clear()
