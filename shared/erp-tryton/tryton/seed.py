"""Seeds a fresh Tryton database with draftline's demo tenant.

    python seed.py <trytond.conf> <database> <people-file>

The same story as shared/erp/src/demo.rs (the built-in backend), mapped to
Tryton as MAPPING.md says: one company (the tenant `demo`, IDR), three
warehouses (the branches), storage locations (the demo's warehouses), items,
vendors and their prices, stock on hand and reserved, reorder points, taxes,
price lists, customers, sales orders, invoices and bills, Jakarta's
purchase orders (PO-JKT-000001 .. PO-JKT-000024), and the agents' drafts of
the days before in every review status (PO-SBY-000001 .. 3, QT-BDG-000001 ..
3; MAPPING.md). Deterministic: no clock, no
randomness (stock moves and documents carry the demo's dates, which are all
on or before 2026-11-28, so the machine's date must be later than that),
except the demo people's Tryton passwords: random, written to <people-file>
as `<login> <password>` lines.
It checks what it wrote (totals, due dates, amounts to pay, stock) and fails
loudly if Tryton computed anything else than demo.rs says.
"""
import datetime as dt
import hashlib
import secrets
import sys
from collections import OrderedDict
from decimal import ROUND_HALF_EVEN, Decimal

from proteus import Model, Wizard
from proteus import config as pconfig

D = Decimal
day = dt.date.fromisoformat


def log(*args):
    print('seed:', *args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- demo.rs
# (branch id, code, city, demo warehouses); the first demo warehouse is the
# Tryton warehouse's storage location.
BRANCHES = [
    ('SBY-01', 'SBY', 'Surabaya', ['SBY-WH1', 'SBY-WH2']),
    ('JKT-01', 'JKT', 'Jakarta', ['JKT-WH1']),
    ('BDG-01', 'BDG', 'Bandung', ['BDG-WH1']),
]
ALL = [b[0] for b in BRANCHES]

# (code, name, base unit, [(other unit, factor)])
ITEMS = [
    ('BRG-0042', 'Deep groove ball bearing 6204-2RS', 'PCS', [('BOX', 24)]),
    ('BRG-0043', 'Deep groove ball bearing 6205-2RS', 'PCS', [('BOX', 24)]),
    ('BLT-0107', 'Hex bolt M10x40, zinc plated', 'PCS', [('BOX', 100)]),
    ('VBT-0220', 'V-belt A-42', 'PCS', []),
    ('OIL-0310', 'Hydraulic oil ISO VG 46', 'L', [('CTN', 20)]),
    ('CBL-0220', 'NYY power cable 3x2.5 mm2', 'M', [('ROLL', 50)]),
    ('GLV-0015', 'Nitrile work gloves', 'PCS', [('BOX', 12)]),
    ('WLD-0501', 'Welding electrode E6013 2.6 mm', 'KG', [('BOX', 5)]),
]

# (code, name, branches supplied, payment terms days)
VENDORS = [
    ('V-00231', 'PT Sinar Bearindo', ALL, 30),
    ('V-00415', 'CV Baut Jaya', ['SBY-01', 'JKT-01'], 30),
    ('V-00508', 'PT Pelumas Nusantara', ALL, 45),
    ('V-00612', 'PT Kabel Prima', ['JKT-01', 'BDG-01'], 60),
]

# (vendor, item, unit, price)
PRICES = [
    ('V-00231', 'BRG-0042', 'PCS', 12_500),
    ('V-00231', 'BRG-0042', 'BOX', 288_000),
    ('V-00231', 'BRG-0043', 'PCS', 14_250),
    ('V-00231', 'VBT-0220', 'PCS', 38_000),
    ('V-00415', 'BLT-0107', 'PCS', 1_200),
    ('V-00415', 'BLT-0107', 'BOX', 110_000),
    ('V-00415', 'WLD-0501', 'KG', 42_000),
    ('V-00508', 'OIL-0310', 'L', 36_500),
    ('V-00508', 'OIL-0310', 'CTN', 700_000),
    ('V-00612', 'CBL-0220', 'M', 18_500),
    ('V-00612', 'CBL-0220', 'ROLL', 880_000),
    ('V-00612', 'GLV-0015', 'PCS', 9_500),
    ('V-00612', 'GLV-0015', 'BOX', 105_000),
]

# (branch, warehouse, item, on hand, reserved), base units
STOCK = [
    ('SBY-01', 'SBY-WH1', 'BRG-0042', 30, 12),
    ('SBY-01', 'SBY-WH2', 'BRG-0042', 10, 0),
    ('SBY-01', 'SBY-WH1', 'BRG-0043', 400, 20),
    ('SBY-01', 'SBY-WH1', 'BLT-0107', 150, 50),
    ('SBY-01', 'SBY-WH2', 'OIL-0310', 600, 0),
    ('SBY-01', 'SBY-WH1', 'VBT-0220', 4, 1),
    ('JKT-01', 'JKT-WH1', 'BRG-0042', 520, 40),
    ('JKT-01', 'JKT-WH1', 'BLT-0107', 900, 100),
    ('JKT-01', 'JKT-WH1', 'CBL-0220', 60, 10),
    ('JKT-01', 'JKT-WH1', 'OIL-0310', 40, 0),
    ('BDG-01', 'BDG-WH1', 'BRG-0042', 48, 0),
    ('BDG-01', 'BDG-WH1', 'GLV-0015', 20, 8),
    ('BDG-01', 'BDG-WH1', 'CBL-0220', 700, 0),
    ('BDG-01', 'BDG-WH1', 'WLD-0501', 12, 0),
]

# (branch, item, reorder point, reorder qty, preferred vendor), base units
POLICIES = [
    ('SBY-01', 'BRG-0042', 48, 240, 'V-00231'),
    ('SBY-01', 'BRG-0043', 96, 240, 'V-00231'),
    ('SBY-01', 'BLT-0107', 200, 1000, 'V-00415'),
    ('SBY-01', 'OIL-0310', 200, 400, 'V-00508'),
    ('SBY-01', 'VBT-0220', 10, 20, 'V-00231'),
    ('JKT-01', 'BRG-0042', 96, 480, 'V-00231'),
    ('JKT-01', 'BLT-0107', 300, 2000, 'V-00415'),
    ('JKT-01', 'CBL-0220', 100, 500, 'V-00612'),
    ('JKT-01', 'OIL-0310', 100, 400, 'V-00508'),
    ('BDG-01', 'BRG-0042', 48, 240, 'V-00231'),
    ('BDG-01', 'GLV-0015', 24, 120, 'V-00612'),
    ('BDG-01', 'CBL-0220', 150, 500, 'V-00612'),
    ('BDG-01', 'WLD-0501', 25, 50, 'V-00415'),
]

# (code, name, rate %, valid) -- VAT10 ended 2022-03-31 (inactive)
TAXES = [
    ('VAT11', 'VAT 11%', 11, None),
    ('VAT10', 'VAT 10% (former rate)', 10, day('2022-03-31')),
    ('VAT0', 'VAT 0% (zero-rated)', 0, None),
    ('EXEMPT', 'Exempt', 0, None),
]

# (list, item, unit, price)
LIST_PRICES = [
    ('PL-RETAIL', 'BRG-0042', 'PCS', 16_500),
    ('PL-RETAIL', 'BRG-0042', 'BOX', 372_000),
    ('PL-RETAIL', 'BRG-0043', 'PCS', 18_500),
    ('PL-RETAIL', 'BLT-0107', 'PCS', 1_800),
    ('PL-RETAIL', 'BLT-0107', 'BOX', 165_000),
    ('PL-RETAIL', 'VBT-0220', 'PCS', 52_000),
    ('PL-RETAIL', 'OIL-0310', 'L', 48_000),
    ('PL-RETAIL', 'OIL-0310', 'CTN', 930_000),
    ('PL-RETAIL', 'CBL-0220', 'M', 24_000),
    ('PL-RETAIL', 'CBL-0220', 'ROLL', 1_150_000),
    ('PL-RETAIL', 'GLV-0015', 'PCS', 13_000),
    ('PL-RETAIL', 'GLV-0015', 'BOX', 145_000),
    ('PL-RETAIL', 'WLD-0501', 'KG', 58_000),
    ('PL-WHOLESALE', 'BRG-0042', 'PCS', 15_000),
    ('PL-WHOLESALE', 'BRG-0042', 'BOX', 340_000),
    ('PL-WHOLESALE', 'BRG-0043', 'PCS', 17_000),
    ('PL-WHOLESALE', 'BLT-0107', 'BOX', 150_000),
    ('PL-WHOLESALE', 'OIL-0310', 'L', 45_500),
    ('PL-WHOLESALE', 'OIL-0310', 'CTN', 880_000),
    ('PL-WHOLESALE', 'CBL-0220', 'M', 22_000),
    ('PL-WHOLESALE', 'CBL-0220', 'ROLL', 1_050_000),
    ('PL-WHOLESALE', 'GLV-0015', 'BOX', 132_000),
]

# (branch, code, name, city, price list, credit limit, terms days,
#  tax exempt, credit hold)
CUSTOMERS = [
    ('BDG-01', 'C-BDG-001', 'PT Tekstil Priangan', 'Bandung',
        'PL-WHOLESALE', 150_000_000, 30, False, None),
    ('BDG-01', 'C-BDG-002', 'CV Mitra Teknik Cimahi', 'Cimahi',
        'PL-RETAIL', 25_000_000, 14, False, None),
    ('BDG-01', 'C-BDG-003', 'UD Sumber Rejeki Lembang', 'Lembang',
        'PL-RETAIL', 10_000_000, 14, False,
        'an invoice is more than 90 days overdue'),
    ('BDG-01', 'C-BDG-004', 'Yayasan Pendidikan Ganesha', 'Bandung',
        'PL-RETAIL', 20_000_000, 30, True, None),
    ('SBY-01', 'C-SBY-001', 'PT Galangan Kapal Tanjung Perak', 'Surabaya',
        'PL-WHOLESALE', 200_000_000, 30, False, None),
    ('SBY-01', 'C-SBY-002', 'CV Sinar Mesin Sidoarjo', 'Sidoarjo',
        'PL-RETAIL', 30_000_000, 14, False, None),
    ('JKT-01', 'C-JKT-001', 'PT Konstruksi Cakung', 'Jakarta',
        'PL-WHOLESALE', 250_000_000, 30, False, None),
    ('JKT-01', 'C-JKT-002', 'PT Logistik Tanjung Priok', 'Jakarta',
        'PL-RETAIL', 50_000_000, 14, False, None),
]

# (branch, number, customer, order date, status, total, not yet invoiced)
# plus how the order is made in Tryton: (item, qty, unit) of its one line,
# VAT11 on it, the unit price derived so that the total is demo.rs's, and
# the part shipped (and so invoiced, invoice method "on fulfillment").
SALES_ORDERS = [
    ('BDG-01', 'SO-BDG-000039', 'C-BDG-001', '2026-10-30', 'invoiced',
        12_210_000, 0, ('CBL-0220', 10, 'ROLL'), 10),
    ('BDG-01', 'SO-BDG-000045', 'C-BDG-001', '2026-11-20', 'open',
        31_080_000, 31_080_000, ('BRG-0042', 80, 'BOX'), 0),
    ('BDG-01', 'SO-BDG-000047', 'C-BDG-001', '2026-11-26',
        'partially_delivered', 9_990_000, 4_995_000,
        ('CBL-0220', 8, 'ROLL'), 4),
    ('BDG-01', 'SO-BDG-000046', 'C-BDG-002', '2026-11-24', 'open',
        12_500_000, 12_500_000, ('OIL-0310', 10, 'CTN'), 0),
    ('BDG-01', 'SO-BDG-000041', 'C-BDG-002', '2026-11-05', 'cancelled',
        3_330_000, 0, ('BLT-0107', 20, 'BOX'), 0),
    ('SBY-01', 'SO-SBY-000120', 'C-SBY-001', '2026-11-25', 'open',
        27_200_000, 27_200_000, ('BRG-0043', 1000, 'PCS'), 0),
    ('JKT-01', 'SO-JKT-000233', 'C-JKT-001', '2026-11-27', 'open',
        44_000_000, 44_000_000, ('BLT-0107', 200, 'BOX'), 0),
]
# The invoice of SO-BDG-000039 (shipped 2026-11-01) is INV-BDG-000131.
SALE_INVOICE = {'SO-BDG-000039': 'INV-BDG-000131'}

# (branch, number, customer, invoice date, due date, amount, paid)
INVOICES = [
    ('BDG-01', 'INV-BDG-000101', 'C-BDG-001', '2026-08-10', '2026-09-09',
        18_500_000, 18_500_000),
    ('BDG-01', 'INV-BDG-000118', 'C-BDG-001', '2026-09-15', '2026-10-15',
        24_420_000, 0),
    ('BDG-01', 'INV-BDG-000131', 'C-BDG-001', '2026-11-02', '2026-12-02',
        12_210_000, 0),
    ('BDG-01', 'INV-BDG-000097', 'C-BDG-002', '2026-08-01', '2026-08-15',
        6_660_000, 2_000_000),
    ('BDG-01', 'INV-BDG-000125', 'C-BDG-002', '2026-10-20', '2026-11-03',
        8_880_000, 0),
    ('BDG-01', 'INV-BDG-000088', 'C-BDG-003', '2026-07-10', '2026-07-24',
        4_440_000, 0),
    ('SBY-01', 'INV-SBY-000301', 'C-SBY-001', '2026-10-05', '2026-11-04',
        42_000_000, 0),
    ('SBY-01', 'INV-SBY-000322', 'C-SBY-001', '2026-11-15', '2026-12-15',
        16_320_000, 0),
    ('SBY-01', 'INV-SBY-000280', 'C-SBY-002', '2026-08-20', '2026-09-03',
        5_280_000, 0),
    ('JKT-01', 'INV-JKT-000510', 'C-JKT-001', '2026-09-01', '2026-10-01',
        66_000_000, 30_000_000),
    ('JKT-01', 'INV-JKT-000528', 'C-JKT-002', '2026-11-10', '2026-11-24',
        3_720_000, 0),
]

# (branch, number, vendor, bill date, due date, amount, paid)
BILLS = [
    ('BDG-01', 'VB-BDG-000210', 'V-00612', '2026-10-01', '2026-11-30',
        26_400_000, 0),
    ('BDG-01', 'VB-BDG-000198', 'V-00231', '2026-09-05', '2026-10-05',
        8_640_000, 0),
    ('BDG-01', 'VB-BDG-000215', 'V-00508', '2026-11-10', '2026-12-25',
        7_000_000, 0),
    ('SBY-01', 'VB-SBY-000450', 'V-00231', '2026-10-20', '2026-11-19',
        14_400_000, 0),
    ('SBY-01', 'VB-SBY-000462', 'V-00415', '2026-11-05', '2026-12-05',
        11_000_000, 0),
    ('SBY-01', 'VB-SBY-000431', 'V-00508', '2026-08-15', '2026-09-29',
        21_000_000, 0),
    ('JKT-01', 'VB-JKT-000700', 'V-00612', '2026-07-20', '2026-09-18',
        37_000_000, 0),
    ('JKT-01', 'VB-JKT-000712', 'V-00415', '2026-11-01', '2026-12-01',
        22_000_000, 0),
    ('JKT-01', 'VB-JKT-000690', 'V-00231', '2026-09-01', '2026-10-01',
        9_600_000, 9_600_000),
]

ITEM_BASE = {code: base for code, _, base, _ in ITEMS}

# The demo's people (demo.rs USERS), as Tryton users with the same login,
# in the Tryton groups nearest their scopes (MAPPING.md "Tryton users and
# access"): purchasing:* Purchase, sales:* Sales, inventory:read Stock,
# finance:read Accounting. Tryton's groups grant reading and changing
# together, and Tryton's own workflow has no approve permission: who may
# quote or confirm an agent draft is the module's four-eyes rule (common.py).
# Each gets a random password (the seed's one randomness), written to the
# file the seed is given; `draftline serve --erp tryton` prints them.
PEOPLE = [
    ('buyer-sby', 'Buyer Surabaya (buyer-sby)',
        ['purchase.group_purchase', 'stock.group_stock']),
    ('clerk-sby', 'Warehouse clerk Surabaya (clerk-sby)',
        ['stock.group_stock']),
    ('buyer-jkt', 'Buyer Jakarta (buyer-jkt)',
        ['purchase.group_purchase', 'stock.group_stock']),
    ('sales-bdg', 'Sales Bandung (sales-bdg)',
        ['sale.group_sale', 'stock.group_stock', 'account.group_account']),
    ('approver-sby', 'Approver Surabaya (approver-sby)',
        ['purchase.group_purchase', 'stock.group_stock']),
    ('approver-bdg', 'Approver Bandung (approver-bdg)',
        ['sale.group_sale', 'account.group_account']),
]

JAKARTA_PO_COUNT = 24
PO_STATUSES = ['received', 'received', 'sent', 'approved', 'cancelled']


# Surabaya's agent PO drafts of the days before (demo.rs
# agent_purchase_orders()): (n, vendor, [(item, qty, unit)], created (UTC),
# note, needed_by, decision: None (waiting for review), ('approved', None,
# person, at) or ('rejected', reason, person, at)).
SURABAYA_AGENT_PO_COUNT = 3
AGENT_POS = [
    (1, 'V-00231', [('BRG-0042', 10, 'BOX'), ('VBT-0220', 12, 'PCS')],
        '2026-11-26T02:14:09',
        'Weekly reorder: BRG-0042 and VBT-0220 are below their reorder '
        'points.', '2026-12-10', None),
    (2, 'V-00508', [('OIL-0310', 20, 'CTN')], '2026-11-25T01:05:42',
        'Hydraulic oil for the December maintenance window.', '2026-12-05',
        ('approved', None, 'approver-sby', '2026-11-25T09:30:00')),
    (3, 'V-00415', [('BLT-0107', 10, 'BOX')], '2026-11-24T01:02:17',
        'Bolts below reorder point.', '2026-12-03',
        ('rejected', 'CV Baut Jaya raised the bolt price last week; ask them '
            'for a new quote before we order.', 'approver-sby',
            '2026-11-24T10:12:00')),
]

# Bandung's agent quote drafts (demo.rs agent_quotes()): (n, customer,
# price list, [(item, qty, unit)], created (UTC), valid_until, decision)
BANDUNG_AGENT_QUOTE_COUNT = 3
AGENT_QUOTES = [
    (1, 'C-BDG-001', 'PL-WHOLESALE',
        [('BRG-0042', 5, 'BOX'), ('GLV-0015', 10, 'BOX')],
        '2026-11-26T03:20:00', '2026-12-10', None),
    (2, 'C-BDG-001', 'PL-WHOLESALE', [('CBL-0220', 4, 'ROLL')],
        '2026-11-25T03:02:00', '2026-12-09',
        ('approved', 'Price matches the framework agreement.', 'approver-bdg',
            '2026-11-25T08:45:00')),
    (3, 'C-BDG-002', 'PL-RETAIL', [('OIL-0310', 3, 'CTN')],
        '2026-11-24T02:40:00', '2026-12-08',
        ('rejected', 'CV Mitra Teknik Cimahi has overdue invoices (one since '
            'August); no new quote until they are paid.', 'approver-bdg',
            '2026-11-24T07:55:00')),
]
AGENT_QUOTE_NOTE = 'Customer asked for a price by e-mail.'
AGENT_QUOTE_CREDIT_CHECK = 'Within the credit limit when it was drafted.'


def agent_key(branch, user, run, client_ref):
    """The draftline_key of a seeded agent draft, in the form the server
    gives the keys it sends (shared/server/src/pipeline.rs external_key):
    dl1- and the SHA-256 of the tenant, the stored idempotency key
    (<branch>#<user>#R#<run>:<client_ref>, the key an agent run forms) and
    the key's use, each followed by a NUL byte. The use is `demo-seed`
    where a real call's is a ULID, so no call can ever form these keys."""
    digest = hashlib.sha256()
    for part in ('demo', f'{branch}#{user}#R#{run}:{client_ref}',
            'demo-seed'):
        digest.update(part.encode())
        digest.update(b'\0')
    return 'dl1-' + digest.hexdigest()


def jakarta_purchase_orders():
    "demo.rs jakarta_purchase_orders(): (n, vendor, item, unit, price, qty,"
    " status, created, needed_by, note)"
    orders = [(1, 'V-00612', 'CBL-0220', 'M', 18_500, 20, 'draft',
            day('2026-11-20'), day('2026-12-20'), 'Drafted by hand')]
    lines = [p for p in PRICES if p[0] != 'V-00415' or p[2] == 'BOX']
    start = day('2026-09-01')
    for n in range(2, JAKARTA_PO_COUNT + 1):
        vendor, item, unit, price = lines[n % len(lines)]
        created = start + dt.timedelta(days=3 * n)
        orders.append((n, vendor, item, unit, price, 2 + n % 7,
                PO_STATUSES[n % len(PO_STATUSES)], created,
                created + dt.timedelta(days=14), None))
    return orders


# ---------------------------------------------------------------- helpers
def cents(value):
    return D(value).quantize(D('0.01'), rounding=ROUND_HALF_EVEN)


def net_for_gross(gross, rate):
    "The net amount whose tax (rounded half even, as Tryton) gives gross"
    gross = D(gross)
    guess = cents(gross / (1 + rate))
    for delta in range(0, 5):
        for net in (guess + D(delta) / 100, guess - D(delta) / 100):
            if net + cents(net * rate) == gross:
                return net
    raise ValueError(f'no net amount for {gross} at {rate}')


def unit_price_for(net, qty):
    "A unit price with at most 4 decimals such that qty x price = net"
    price = (D(net) / qty).quantize(D('0.0001'))
    if price * qty != D(net):
        raise ValueError(f'{net} is not {qty} x a 4-decimal price')
    return price


def check(what, got, want):
    if got != want:
        raise SystemExit(f'seed: check failed: {what}: Tryton has {got!r}, '
            f'demo.rs says {want!r}')


def main(conf_file, database, people_file):
    config = pconfig.set_trytond(database, config_file=conf_file)
    # the demo's invoices are due in the past: Tryton warns, people confirm
    config.skip_warning = True
    from trytond.modules.account.tests.tools import (
        create_chart, create_fiscalyear, get_accounts)
    from trytond.modules.account_invoice.tests.tools import (
        set_fiscalyear_invoice_sequences)
    from trytond.modules.company.tests.tools import create_company
    from trytond.modules.currency.tests.tools import get_currency

    # Tryton refuses writes to read-only fields (number) from outside and
    # proteus does not send them; the seed numbers people's documents as
    # demo.rs does, by an internal write.
    def set_number(record, number):
        record.__class__.write([record.id], {'number': number},
            {**config.context, '_check_access': False})
        record.reload()
        check(f'{number} number', record.number, number)

    # The provenance fields are read-only to every Tryton user but the
    # draftline user (access.xml), admin included (trytond 8.0 has no
    # administrator who bypasses field access), and proteus neither sends a
    # field its user may not write nor lets the server skip the check: the
    # seed writes them as Tryton's root user, in a transaction of its own.
    def set_provenance(record, **values):
        from trytond.pool import Pool
        from trytond.transaction import Transaction
        with Transaction().start(database, 0, context=config.context):
            Model_ = Pool(database).get(record.__class__.__name__)
            Model_.write([Model_(record.id)], values)
        record.reload()
        for name, value in values.items():
            check(f'{record.rec_name} {name}', getattr(record, name), value)

    Location = Model.get('stock.location')
    ModelData = Model.get('ir.model.data')

    # ---- company, currency, chart of accounts, fiscal years
    log('company, chart of accounts, fiscal years')
    idr = get_currency('IDR')
    idr.name, idr.symbol, idr.rounding = 'Indonesian Rupiah', 'Rp', D('0.01')
    idr.digits = 2
    idr.save()
    Party = Model.get('party.party')
    company_party = Party(name='PT Draftline Demo Distribusi', code='DEMO')
    company_party.save()
    create_company(company_party, idr)
    Company = Model.get('company.company')
    company, = Company.find()
    create_chart(company)
    accounts = get_accounts(company)

    # ---- Tryton users: the draftline user (made by the module, access.xml:
    # draftline's REST key is its key, setup.sh) and the people who approve
    # in Tryton's own workflow, in Tryton's own groups; everyone works in
    # the company ("User in companies" rules)
    log('users')
    User = Model.get('res.user')
    Group = Model.get('res.group')
    draftline_user, = User.find([('login', '=', 'draftline')])
    check('draftline user groups',
        [g.id for g in draftline_user.groups],
        [ModelData.get_id('draftline.group_draftline', config.context)])
    if company.id not in [c.id for c in draftline_user.companies]:
        draftline_user.companies.append(Company(company.id))
    draftline_user.company = company
    draftline_user.save()
    people = {}
    for login, name, groups in PEOPLE:
        person = User(login=login, name=name)
        for group in groups:
            person.groups.append(
                Group(ModelData.get_id(group, config.context)))
        person.companies.append(Company(company.id))
        person.company = company
        password = secrets.token_urlsafe(12)
        person.password = password
        person.save()
        people[login] = (person.id, password)
    with open(people_file, 'w') as f:
        for login, (_, password) in people.items():
            print(login, password, file=f)

    for year in (2026, 2027):
        fiscalyear = set_fiscalyear_invoice_sequences(create_fiscalyear(
                company, (dt.date(year, 1, 1), dt.date(year, 12, 31))))
        fiscalyear.click('create_period')

    # taxes rounded per line, as draftline's rounding rule says
    AccountConfiguration = Model.get('account.configuration')
    account_configuration = AccountConfiguration(1)
    account_configuration.tax_rounding = 'line'
    account_configuration.save()

    Journal = Model.get('account.journal')
    PaymentMethod = Model.get('account.invoice.payment.method')
    cash_journal, = Journal.find([('type', '=', 'cash')])
    payment_method = PaymentMethod(
        name='Bank transfer', journal=cash_journal,
        credit_account=accounts['cash'], debit_account=accounts['cash'])
    payment_method.save()

    # ---- payment terms: NET<days>
    PaymentTerm = Model.get('account.invoice.payment_term')
    terms = {}
    for days in (14, 30, 45, 60):
        term = PaymentTerm(name=f'NET{days}', description=f'Net {days} days')
        line = term.lines.new(type='remainder')
        delta, = line.relativedeltas
        delta.days = days
        term.save()
        terms[days] = term

    # ---- taxes, and the EXEMPT customer tax rule
    log('taxes')
    Tax = Model.get('account.tax')
    taxes = {}
    for code, name, rate, end_date in TAXES:
        tax = Tax(name=code, description=name, type='percentage',
            rate=D(rate) / 100, company=company,
            invoice_account=accounts['tax'],
            credit_note_account=accounts['tax'])
        if end_date:
            tax.end_date = end_date
        tax.save()
        taxes[code] = tax
    TaxRule = Model.get('account.tax.rule')
    exempt_rule = TaxRule(name='EXEMPT', kind='sale', company=company)
    exempt_rule.lines.new(tax=taxes['EXEMPT'])
    exempt_rule.save()

    ProductCategory = Model.get('product.category')
    goods = ProductCategory(name='Goods', accounting=True,
        account_expense=accounts['expense'],
        account_revenue=accounts['revenue'])
    goods.customer_taxes.append(Tax(taxes['VAT11'].id))
    goods.save()

    # ---- units: u, kg, l, m, and one UoM per package size (BOX24, ...)
    log('units, items')
    Uom = Model.get('product.uom')
    base_units = {
        'PCS': Uom(ModelData.get_id('product.uom_unit', config.context)),
        'KG': Uom(ModelData.get_id('product.uom_kilogram', config.context)),
        'L': Uom(ModelData.get_id('product.uom_liter', config.context)),
        'M': Uom(ModelData.get_id('product.uom_meter', config.context)),
    }
    package_names = {'BOX': 'Box', 'CTN': 'Carton', 'ROLL': 'Roll'}
    base_names = {'PCS': '', 'KG': ' kg', 'L': ' L', 'M': ' m'}
    item_units = {}  # item -> {draftline unit: Tryton UoM}
    packages = {}
    for code, name, base, others in ITEMS:
        units = {base: base_units[base]}
        for other, factor in others:
            key = (other, factor, base)
            if key not in packages:
                base_uom = base_units[base]
                uom = Uom(name=f'{package_names[other]} of {factor}'
                    f'{base_names[base]}',
                    symbol=f'{other}{factor}', category=base_uom.category,
                    rounding=1, digits=0)
                uom.factor = base_uom.factor * factor
                uom.save()
                packages[key] = uom
            units[other] = packages[key]
        item_units[code] = units

    # ---- items
    Template = Model.get('product.template')
    retail = {(i, u): p for l, i, u, p in LIST_PRICES if l == 'PL-RETAIL'}
    cost = {(i, u): p for _, i, u, p in PRICES}
    products = {}
    for code, name, base, others in ITEMS:
        units = item_units[code]
        other = units[others[0][0]] if others else units[base]
        template = Template(name=name, code=code, type='goods',
            default_uom=units[base], purchasable=True, salable=True,
            account_category=goods,
            list_price=D(retail.get((code, base), 0)))
        template.purchase_uom = other
        template.sale_uom = other
        template.save()
        product, = template.products
        product.cost_price = D(cost.get((code, base), 0))
        product.save()
        products[code] = product

    # ---- warehouses (branches), storage locations (demo warehouses),
    # draftline number sequences
    log('warehouses')
    SequenceStrict = Model.get('ir.sequence.strict')
    SequenceType = Model.get('ir.sequence.type')
    po_type = SequenceType(ModelData.get_id(
            'purchase.sequence_type_purchase', config.context))
    so_type = SequenceType(ModelData.get_id(
            'sale.sequence_type_sale', config.context))
    lost_found, = Location.find([('type', '=', 'lost_found')], limit=1)
    warehouses, storages = {}, {}
    # Each branch's numbers start after the documents the seed makes.
    po_count = {'JKT-01': JAKARTA_PO_COUNT,
        'SBY-01': SURABAYA_AGENT_PO_COUNT}
    qt_count = {'BDG-01': BANDUNG_AGENT_QUOTE_COUNT}
    for branch, code, city, demo_warehouses in BRANCHES:
        input_ = Location(name=f'{city} Input', code=f'{branch}-IN',
            type='storage')
        input_.save()
        output = Location(name=f'{city} Output', code=f'{branch}-OUT',
            type='storage')
        output.save()
        storage = Location(name=f'{city} {demo_warehouses[0]}',
            code=demo_warehouses[0], type='storage')
        storage.save()
        po_sequence = SequenceStrict(name=f'Draftline PO {branch}',
            sequence_type=po_type, company=company, prefix=f'PO-{code}-',
            padding=6, number_next=po_count.get(branch, 0) + 1)
        po_sequence.save()
        qt_sequence = SequenceStrict(name=f'Draftline quote {branch}',
            sequence_type=so_type, company=company, prefix=f'QT-{code}-',
            padding=6, number_next=qt_count.get(branch, 0) + 1)
        qt_sequence.save()
        warehouse = Location(name=f'{city} ({branch})', code=branch,
            type='warehouse', input_location=input_, output_location=output,
            storage_location=storage, lost_found_location=lost_found,
            draftline_purchase_sequence=po_sequence,
            draftline_sale_sequence=qt_sequence)
        warehouse.save()
        for parent in (input_, output, storage):
            parent.reload()
            if parent.parent != warehouse:
                parent.parent = warehouse
                parent.save()
        warehouses[branch] = warehouse
        storages[demo_warehouses[0]] = storage
        for other in demo_warehouses[1:]:
            extra = Location(name=f'{city} {other}', code=other,
                type='storage', parent=warehouse)
            extra.save()
            storages[other] = extra
    supplier_location, = Location.find([('type', '=', 'supplier')], limit=1)
    customer_location, = Location.find([('type', '=', 'customer')], limit=1)

    # ---- parties: categories for branches, vendors, customers
    log('vendors, customers, price lists')
    PartyCategory = Model.get('party.category')
    categories = {}
    for kind in ('supplies', 'customer'):
        for branch in ALL:
            category = PartyCategory(name=f'{kind}:{branch}')
            category.save()
            categories[kind, branch] = category

    def party(code, name, city=None):
        record = Party(name=name, code=code)
        if city:
            address = record.addresses[0] if record.addresses else (
                record.addresses.new())
            address.city = city
        return record

    vendors = {}
    for code, name, branches, days in VENDORS:
        vendor = party(code, name)
        vendor.supplier_payment_term = terms[days]
        for branch in branches:
            vendor.categories.append(
                PartyCategory(categories['supplies', branch].id))
        vendor.save()
        vendors[code] = vendor

    # vendor price lists: one product_supplier per (vendor, item), one price
    # row per unit, the row's draftline_unit saying which unit it prices
    ProductSupplier = Model.get('purchase.product_supplier')
    by_pair = OrderedDict()
    for vendor, item, unit, price in PRICES:
        by_pair.setdefault((vendor, item), []).append((unit, price))
    for (vendor, item), rows in by_pair.items():
        product = products[item]
        supplier = ProductSupplier(template=product.template,
            product=product, party=vendors[vendor], currency=idr)
        for unit, price in rows:
            supplier.prices.new(quantity=0, unit_price=D(price),
                draftline_unit=item_units[item][unit])
        supplier.save()

    # sales price lists: one line per (item, unit); the formula is the price
    PriceList = Model.get('product.price_list')
    price_lists = {}
    for name in ('PL-RETAIL', 'PL-WHOLESALE'):
        price_list = PriceList(name=name, company=company,
            unit='product_default', tax_included=False)
        for list_, item, unit, price in LIST_PRICES:
            if list_ == name:
                price_list.lines.new(product=products[item],
                    draftline_unit=item_units[item][unit],
                    formula=str(price))
        price_list.save()
        price_lists[name] = price_list

    customers = {}
    for (branch, code, name, city, list_, limit, days, exempt,
            hold) in CUSTOMERS:
        customer = party(code, name, city)
        customer.customer_payment_term = terms[days]
        customer.sale_price_list = price_lists[list_]
        customer.credit_limit_amount = D(limit)
        if exempt:
            customer.customer_tax_rule = exempt_rule
        if hold:
            customer.draftline_credit_hold = hold
        customer.categories.append(
            PartyCategory(categories['customer', branch].id))
        customer.save()
        customers[code] = customer

    # ---- reorder points (stock_supply order points per warehouse):
    # min = reorder point, target = reorder point + reorder quantity
    OrderPoint = Model.get('stock.order_point')
    for branch, item, point, qty, _vendor in POLICIES:
        OrderPoint(product=products[item], location=warehouses[branch],
            type='purchase', min_quantity=point, target_quantity=point + qty,
            company=company).save()

    # ---- stock: an opening count, the season's receipts and deliveries,
    # then the count of 2026-11-28 that leaves demo.rs's on-hand figures
    Inventory = Model.get('stock.inventory')

    def count(date, quantities):
        for location, lines in quantities.items():
            inventory = Inventory(location=location, date=date,
                company=company)
            for product, quantity in lines:
                line = inventory.lines.new(product=product)
                line.quantity = quantity
            inventory.click('confirm')
            check(f'inventory {location.code} {date}', inventory.state,
                'done')

    # the season's deliveries (SO-BDG-000039, SO-BDG-000047) need stock
    log('opening stock')
    count(day('2026-07-01'), {storages['BDG-WH1']: [
                (products['CBL-0220'], 5000)]})

    # ---- Jakarta's purchase orders
    log('Jakarta purchase orders')
    Purchase = Model.get('purchase.purchase')
    ShipmentIn = Model.get('stock.shipment.in')
    Move = Model.get('stock.move')
    for (n, vendor, item, unit, price, qty, status, created, needed_by,
            note) in jakarta_purchase_orders():
        number = f'PO-JKT-{n:06d}'
        purchase = Purchase(party=vendors[vendor],
            warehouse=warehouses['JKT-01'], currency=idr,
            invoice_method='manual', purchase_date=created,
            delivery_date=needed_by, comment=note)
        purchase.payment_term = vendors[vendor].supplier_payment_term
        line = purchase.lines.new()
        line.product = products[item]
        line.quantity = qty
        line.unit = item_units[item][unit]
        line.unit_price = D(price)
        purchase.save()
        set_number(purchase, number)
        set_provenance(purchase, drafted_on_behalf_of='buyer-jkt',
            draftline_client_ref=f'manual-{n}')
        check(f'{number} total', purchase.total_amount, cents(price * qty))
        if status == 'draft':
            continue
        purchase.click('quote')
        if status == 'cancelled':
            purchase.click('cancel')
            continue
        if status == 'approved':
            continue
        purchase.click('confirm')
        if status == 'received':
            shipment = ShipmentIn(supplier=vendors[vendor],
                warehouse=warehouses['JKT-01'],
                effective_date=created + dt.timedelta(days=7))
            for move in purchase.moves:
                shipment.incoming_moves.append(Move(move.id))
            shipment.save()
            shipment.click('receive')
            shipment.click('do')
            purchase.reload()
            check(f'{number} shipment', purchase.shipment_state, 'received')

    # ---- the agents' drafts of the days before, in every review status
    log('agent drafts (Surabaya POs, Bandung quotes)')
    Sale = Model.get('sale.sale')
    Note = Model.get('ir.note')
    created_at = {}  # (model, id) -> demo.rs's created_at

    decided_at = {}  # (model, id) -> (person, when)

    def decided(record, decision):
        "A person's decision: Tryton's button, the reason as a note on it"
        verdict, reason, person, at = decision
        decided_at[record.__class__.__name__, record.id] = (person, at)
        # approved = Quote pressed (PO status approved, quote approved);
        # rejected = Cancel pressed on the draft: Tryton has no rejected
        # state, so the adapter reads a PO as cancelled (a quote: rejected)
        record.click('quote' if verdict == 'approved' else 'cancel')
        if reason:
            Note(resource=record, message=f'{verdict.capitalize()} by '
                f'{person} on {at[:10]}: {reason}').save()

    def priced_lines(document, lines, prices, source):
        "Adds (item, qty, unit) lines at their `prices` price; their net total"
        total = 0
        for item, qty, unit in lines:
            price, = [p for s, i, u, p in prices
                if (s, i, u) == (source, item, unit)]
            line = document.lines.new()
            line.product = products[item]
            line.quantity = qty
            line.unit = item_units[item][unit]
            line.unit_price = D(price)
            line.note = f'price list {source}, {item} per {unit}'
            total += price * qty
        return total

    for (n, vendor, lines, created, note, needed_by,
            decision) in AGENT_POS:
        number = f'PO-SBY-{n:06d}'
        run = f'run-sby-reorder-{created[:10]}'
        client_ref = f'reorder-{created[:10]}'
        purchase = Purchase(party=vendors[vendor],
            warehouse=warehouses['SBY-01'], currency=idr,
            invoice_method='manual', delivery_date=day(needed_by),
            comment=note)
        purchase.payment_term = vendors[vendor].supplier_payment_term
        total = priced_lines(purchase, lines, PRICES, vendor)
        purchase.save()
        set_provenance(purchase, number=number, draftline_number=number,
            draftline_key=agent_key('SBY-01', 'buyer-sby', run, client_ref),
            draftline_client_ref=client_ref, drafted_by_agent_run=run,
            drafted_on_behalf_of='buyer-sby')
        check(f'{number} number', purchase.number, number)
        check(f'{number} total', purchase.total_amount, cents(total))
        if decision:
            decided(purchase, decision)
        created_at['purchase.purchase', purchase.id] = created

    for (n, customer, list_, lines, created, valid_until,
            decision) in AGENT_QUOTES:
        number = f'QT-BDG-{n:06d}'
        run = f'run-bdg-quotes-{created[:10]}'
        client_ref = f'quote-{customer}-{created[:10]}'
        quoted = day(created[:10])
        sale = Sale(party=customers[customer],
            warehouse=warehouses['BDG-01'], currency=idr,
            price_list=price_lists[list_], quotation_date=quoted,
            quotation_validity=day(valid_until) - quoted,
            comment=AGENT_QUOTE_NOTE, description=AGENT_QUOTE_CREDIT_CHECK)
        sale.payment_term = customers[customer].customer_payment_term
        net = priced_lines(sale, lines, LIST_PRICES, list_)
        sale.save()
        set_provenance(sale, number=number, draftline_number=number,
            draftline_key=agent_key('BDG-01', 'sales-bdg', run, client_ref),
            draftline_client_ref=client_ref, drafted_by_agent_run=run,
            drafted_on_behalf_of='sales-bdg')
        check(f'{number} number', sale.number, number)
        check(f'{number} taxes', [[t.name for t in l.taxes]
                for l in sale.lines], [['VAT11']] * len(lines))
        check(f'{number} total', sale.total_amount,
            cents(net) + cents(D(net) * D('0.11')))
        check(f'{number} valid until', sale.quotation_expire,
            day(valid_until))
        if decision:
            decided(sale, decision)
        created_at['sale.sale', sale.id] = created

    # Tryton sets create_date itself (the seed's clock); the adapter dates
    # an agent draft by it, so the seed writes demo.rs's instants there, by
    # a direct SQL update in a transaction of its own (nothing else of
    # these documents depends on when they were created).
    from trytond.pool import Pool
    from trytond.transaction import Transaction
    with Transaction().start(database, 0) as transaction:
        pool = Pool(database)
        cursor = transaction.connection.cursor()
        for (model, id_), at in created_at.items():
            table = pool.get(model).__table__()
            cursor.execute(*table.update([table.create_date],
                    [dt.datetime.fromisoformat(at)],
                    where=table.id == id_))
        # ... and who decided, when: Tryton keeps the last user who changed
        # a document (write_uid, write_date), which for these is the person
        # of demo.rs's decision (the seed pressed the button as admin)
        for (model, id_), (person, at) in decided_at.items():
            table = pool.get(model).__table__()
            cursor.execute(*table.update(
                    [table.write_uid, table.write_date],
                    [people[person][0], dt.datetime.fromisoformat(at)],
                    where=table.id == id_))
    for (model, id_), at in created_at.items():
        record = Model.get(model)(id_)
        check(f'{model} {id_} create_date', record.create_date,
            dt.datetime.fromisoformat(at))
        person, at = decided_at.get((model, id_), (None, None))
        check(f'{model} {id_} decided by', record.draftline_decided_by,
            person)

    # ---- sales orders
    log('sales orders')
    sale_invoices = {}
    for (branch, number, customer, date, status, total, open_amount,
            (item, qty, unit), shipped) in SALES_ORDERS:
        net = net_for_gross(total, D('0.11'))
        sale = Sale(party=customers[customer],
            warehouse=warehouses[branch], sale_date=day(date),
            invoice_method='fulfillment', shipment_method='order')
        line = sale.lines.new()
        line.product = products[item]
        line.quantity = qty
        line.unit = item_units[item][unit]
        line.unit_price = unit_price_for(net, qty)
        sale.save()
        set_number(sale, number)
        check(f'{number} taxes', [t.name for t in sale.lines[0].taxes],
            ['VAT11'])
        check(f'{number} total', sale.total_amount, D(total))
        sale.click('quote')
        if status == 'cancelled':
            sale.click('cancel')
            continue
        sale.click('confirm')
        if shipped:
            shipment, = sale.shipments
            shipment.effective_date = (
                day('2026-11-01') if shipped == qty else day('2026-11-27'))
            move, = shipment.inventory_moves
            move.quantity = shipped
            shipment.save()
            shipment.click('assign_try')
            shipment.click('pick')
            shipment.click('pack')
            shipment.click('do')
            sale.reload()
            invoice, = sale.invoices
            check(f'{number} invoice warehouse', invoice.warehouse.code,
                branch)
            sale_invoices[number] = invoice
            invoiced = invoice.total_amount
        else:
            invoiced = D(0)
        check(f'{number} not yet invoiced', D(total) - invoiced,
            D(open_amount))

    # ---- customer invoices (posted; some paid in part or in full)
    log('customer invoices, vendor bills')
    Invoice = Model.get('account.invoice')
    invoice_of = {v: k for k, v in SALE_INVOICE.items()}

    def post_and_pay(invoice, number, date, due, amount, paid):
        invoice.click('post')
        check(f'{number} total', invoice.total_amount, D(amount))
        check(f'{number} due date',
            [l.maturity_date for l in invoice.lines_to_pay], [day(due)])
        if paid:
            pay = invoice.click('pay')
            pay.form.payment_method = payment_method
            pay.form.date = min(day(due), day(date) + dt.timedelta(days=10))
            pay.form.amount = D(paid)
            pay.execute('choice')
            if pay.state != 'end':
                # less than the amount to pay: Tryton asks how to book it
                pay.form.type = 'partial'
                pay.execute('pay')
            invoice.reload()
        check(f'{number} amount to pay', invoice.amount_to_pay,
            D(amount) - D(paid))

    for branch, number, customer, date, due, amount, paid in INVOICES:
        if number in invoice_of:
            invoice = sale_invoices[invoice_of[number]]
        else:
            invoice = Invoice(type='out', party=customers[customer],
                warehouse=warehouses[branch])
            line = invoice.lines.new()
            line.account = accounts['revenue']
            line.description = 'Goods delivered'
            line.quantity = 1
            line.unit_price = net_for_gross(amount, D('0.11'))
            line.taxes.append(Tax(taxes['VAT11'].id))
        invoice.invoice_date = day(date)
        invoice.payment_term = customers[customer].customer_payment_term
        invoice.save()
        set_number(invoice, number)
        post_and_pay(invoice, number, date, due, amount, paid)

    for branch, number, vendor, date, due, amount, paid in BILLS:
        bill = Invoice(type='in', party=vendors[vendor],
            warehouse=warehouses[branch], invoice_date=day(date))
        bill.payment_term = vendors[vendor].supplier_payment_term
        line = bill.lines.new()
        line.account = accounts['expense']
        line.description = 'Goods received'
        line.quantity = 1
        line.unit_price = D(amount)
        bill.save()
        set_number(bill, number)
        post_and_pay(bill, number, date, due, amount, paid)

    # ---- the count that leaves demo.rs's on hand (every item, every
    # storage location), then the reservations: customer shipments people
    # made, assigned (reserved) but not yet picked
    log('stock count 2026-11-28, reservations')
    on_hand = {(w, i): q for _, w, i, q, _ in STOCK}
    count(day('2026-11-28'), {
            location: [(products[i], on_hand.get((w, i), 0))
                for i, *_ in ITEMS]
            for w, location in storages.items()})
    ShipmentOut = Model.get('stock.shipment.out')
    first_customer = {}
    for branch, code, *_ in CUSTOMERS:
        first_customer.setdefault(branch, code)
    for branch, code, city, demo_warehouses in BRANCHES:
        reserved = [(w, i, r) for b, w, i, _, r in STOCK if b == branch and r]
        if not reserved:
            continue
        warehouse = warehouses[branch]
        shipment = ShipmentOut(customer=customers[first_customer[branch]],
            warehouse=warehouse, planned_date=day('2026-11-28'))
        for w, item, quantity in reserved:
            check(f'{w} is the storage of {branch}', w, demo_warehouses[0])
            product = products[item]
            move = shipment.outgoing_moves.new(product=product)
            move.unit = product.default_uom
            move.quantity = quantity
            move.from_location = warehouse.output_location
            move.to_location = customer_location
            move.unit_price = D(retail[item, ITEM_BASE[item]])
            move.currency = idr
        shipment.save()
        shipment.click('wait')
        shipment.click('assign_try')
        check(f'reservation {branch}', shipment.state, 'assigned')

    # ---- check the stock per storage location as a connector reads it
    Product = Model.get('product.product')
    reserved = {(w, i): r for _, w, i, _, r in STOCK}
    for w, location in storages.items():
        for assign in (False, True):
            with config.set_context(locations=[location.id],
                    stock_assign=assign):
                for product in Product.find([]):
                    code = product.code
                    want = on_hand.get((w, code), 0)
                    if assign:
                        want -= reserved.get((w, code), 0)
                    check(f'{w} {code} quantity (stock_assign={assign})',
                        product.quantity, float(want))
    log('done')


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit('usage: seed.py <trytond.conf> <database> <people-file>')
    main(*sys.argv[1:])
