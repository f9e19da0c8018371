"""Seeds a fresh Tryton database with draftline's demo tenant.

    python seed.py <trytond.conf> <database> <people-file> <demo.json>

The story is <demo.json>, the one data file of the demo
(shared/erp/demo/demo.json; the built-in backend reads it through
shared/erp/src/demo.rs), mapped to Tryton as MAPPING.md says: one company
(the tenant `demo`, IDR), three warehouses (the branches), storage locations
(the demo's warehouses), items, vendors and their prices, stock on hand and
reserved, reorder points, taxes, price lists, customers, sales orders,
invoices and bills, Jakarta's purchase orders, and the agents' drafts of the
days before in every review status (MAPPING.md), one function per section;
`main` calls them in order. Deterministic: no clock, no randomness (stock
moves and documents carry the demo's dates, which are all on or before
2026-11-28, so the machine's date must be later than that), except the demo
people's Tryton passwords: random, written to <people-file> as
`<login> <password>` lines.
It checks what it wrote (totals, due dates, amounts to pay, stock) and fails
loudly if Tryton computed anything else than the story says.
"""
import datetime as dt
import json
import secrets
import sys
from collections import OrderedDict
from decimal import ROUND_HALF_EVEN, Decimal
from types import SimpleNamespace

from proteus import Model
from proteus import config as pconfig

D = Decimal
day = dt.date.fromisoformat


def instant(text):
    "A UTC instant of the story (`2026-11-26T02:14:09.000Z`), as Tryton keeps it"
    return dt.datetime.fromisoformat(text.removesuffix('Z'))


def log(*args):
    print('seed:', *args, file=sys.stderr, flush=True)


# ------------------------------------------------- what only Tryton needs
# The Tryton groups nearest each scope (MAPPING.md "Tryton users and
# access"), in the order a person's groups are added: purchasing:*
# Purchase, sales:* Sales, inventory:read Stock, finance:read Accounting.
# Tryton's groups grant reading and changing together, and Tryton's own
# workflow has no approve permission: who may quote or confirm an agent
# draft is the module's four-eyes rule (common.py).
SCOPE_GROUPS = [
    ('purchasing:', 'purchase.group_purchase'),
    ('sales:', 'sale.group_sale'),
    ('inventory:read', 'stock.group_stock'),
    ('finance:read', 'account.group_account'),
]

# Tryton's UoMs of the draftline base units; a package (BOX of 24) is a UoM
# of its own, named after these.
BASE_UNITS = {'PCS': 'product.uom_unit', 'KG': 'product.uom_kilogram',
    'L': 'product.uom_liter', 'M': 'product.uom_meter'}
PACKAGE_NAMES = {'BOX': 'Box', 'CTN': 'Carton', 'ROLL': 'Roll'}
BASE_NAMES = {'PCS': '', 'KG': ' kg', 'L': ' L', 'M': ' m'}

# The season's deliveries (SO-BDG-000039, SO-BDG-000047) need stock: an
# opening count in Bandung before them.
OPENING_COUNT = (day('2026-07-01'), 'BDG-WH1', 'CBL-0220', 5000)
# The count that leaves the story's on-hand figures, and the reservations
# made that day.
STOCK_DAY = day('2026-11-28')


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
            f'the demo story says {want!r}')


def tax_rate(story, code):
    "The rate of tax `code`, as a fraction"
    rate, = [t['rate_percent'] for t in story['tax_types'] if t['code'] == code]
    return D(rate) / 100


def set_number(t, record, number):
    """Tryton refuses writes to read-only fields (number) from outside and
    proteus does not send them; the seed numbers people's documents as the
    story does, by an internal write."""
    record.__class__.write([record.id], {'number': number},
        {**t.config.context, '_check_access': False})
    record.reload()
    check(f'{number} number', record.number, number)


def set_provenance(t, record, **values):
    """The provenance fields are read-only to every Tryton user but the
    draftline user (access.xml), admin included (trytond 8.0 has no
    administrator who bypasses field access), and proteus neither sends a
    field its user may not write nor lets the server skip the check: the
    seed writes them as Tryton's root user, in a transaction of its own."""
    from trytond.pool import Pool
    from trytond.transaction import Transaction
    with Transaction().start(t.database, 0, context=t.config.context):
        Model_ = Pool(t.database).get(record.__class__.__name__)
        Model_.write([Model_(record.id)], values)
    record.reload()
    for name, value in values.items():
        check(f'{record.rec_name} {name}', getattr(record, name), value)


def price_index(rows, source):
    "{(vendor or list, item, unit): price} of the story's price rows"
    return {(row[source], row['item'], row['uom']): row['unit_price']
        for row in rows}


def priced_lines(t, document, lines, prices, source, with_source):
    """Adds the story's (item, qty, uom) lines at their price in `prices`
    (a price_index) for `source`, the vendor or price list, saying where
    the price came from when `with_source`; their net total"""
    total = 0
    for wanted in lines:
        item, qty, unit = wanted['item'], wanted['qty'], wanted['uom']
        price = prices[source, item, unit]
        line = document.lines.new()
        line.product = t.products[item]
        line.quantity = qty
        line.unit = t.item_units[item][unit]
        line.unit_price = D(price)
        if with_source:
            line.note = f'price list {source}, {item} per {unit}'
        total += price * qty
    return total


def count(t, date, quantities):
    "Stock counts of `date`: {storage location: [(product, quantity)]}"
    Inventory = Model.get('stock.inventory')
    for location, lines in quantities.items():
        inventory = Inventory(location=location, date=date,
            company=t.company)
        for product, quantity in lines:
            line = inventory.lines.new(product=product)
            line.quantity = quantity
        inventory.click('confirm')
        check(f'inventory {location.code} {date}', inventory.state, 'done')


# --------------------------------------------------------------- sections
def company(t, story):
    "The tenant's company, its currency and chart of accounts"
    log('company, chart of accounts, fiscal years')
    from trytond.modules.account.tests.tools import (
        create_chart, get_accounts)
    from trytond.modules.company.tests.tools import create_company
    from trytond.modules.currency.tests.tools import get_currency
    idr = get_currency(story['currency'])
    idr.name, idr.symbol, idr.rounding = 'Indonesian Rupiah', 'Rp', D('0.01')
    idr.digits = 2
    idr.save()
    Party = Model.get('party.party')
    company_party = Party(name=story['company']['name'],
        code=story['company']['code'])
    company_party.save()
    create_company(company_party, idr)
    Company = Model.get('company.company')
    company, = Company.find()
    create_chart(company)
    t.idr, t.company = idr, company
    t.accounts = get_accounts(company)


def people(t, story, people_file):
    """Tryton users: the draftline user (made by the module, access.xml:
    draftline's REST key is its key, setup.sh) and the demo's people with
    the same login, in the Tryton groups of their scopes; everyone works in
    the company ("User in companies" rules). Each person gets a random
    password (the seed's one randomness), written to `people_file`;
    `draftline serve --erp tryton` prints them."""
    log('users')
    User = Model.get('res.user')
    Group = Model.get('res.group')
    Company = Model.get('company.company')
    ModelData = Model.get('ir.model.data')
    draftline_user, = User.find([('login', '=', 'draftline')])
    check('draftline user groups',
        [g.id for g in draftline_user.groups],
        [ModelData.get_id('draftline.group_draftline', t.config.context)])
    if t.company.id not in [c.id for c in draftline_user.companies]:
        draftline_user.companies.append(Company(t.company.id))
    draftline_user.company = t.company
    draftline_user.save()
    t.people = {}
    for user in story['users']:
        scopes = user['scope'].split()
        person = User(login=user['sub'], name=f"{user['name']} ({user['sub']})")
        for prefix, group in SCOPE_GROUPS:
            if any(scope.startswith(prefix) for scope in scopes):
                person.groups.append(
                    Group(ModelData.get_id(group, t.config.context)))
        person.companies.append(Company(t.company.id))
        person.company = t.company
        password = secrets.token_urlsafe(12)
        person.password = password
        person.save()
        t.people[user['sub']] = (person.id, password)
    with open(people_file, 'w') as f:
        for login, (_, password) in t.people.items():
            print(login, password, file=f)


def ledger(t, story):
    """Fiscal years, taxes rounded per line (draftline's rounding rule), a
    payment method, and a payment term NET<days> for every term the story
    gives"""
    from trytond.modules.account.tests.tools import create_fiscalyear
    from trytond.modules.account_invoice.tests.tools import (
        set_fiscalyear_invoice_sequences)
    for year in (2026, 2027):
        fiscalyear = set_fiscalyear_invoice_sequences(create_fiscalyear(
                t.company, (dt.date(year, 1, 1), dt.date(year, 12, 31))))
        fiscalyear.click('create_period')

    AccountConfiguration = Model.get('account.configuration')
    account_configuration = AccountConfiguration(1)
    account_configuration.tax_rounding = 'line'
    account_configuration.save()

    Journal = Model.get('account.journal')
    PaymentMethod = Model.get('account.invoice.payment.method')
    cash_journal, = Journal.find([('type', '=', 'cash')])
    t.payment_method = PaymentMethod(
        name='Bank transfer', journal=cash_journal,
        credit_account=t.accounts['cash'], debit_account=t.accounts['cash'])
    t.payment_method.save()

    PaymentTerm = Model.get('account.invoice.payment_term')
    t.terms = {}
    for days in sorted({p['payment_terms_days']
            for p in story['vendors'] + story['customers']}):
        term = PaymentTerm(name=f'NET{days}', description=f'Net {days} days')
        line = term.lines.new(type='remainder')
        delta, = line.relativedeltas
        delta.days = days
        term.save()
        t.terms[days] = term


def taxes(t, story):
    """The tax types (an inactive one ends on its `ended_on`), the EXEMPT
    customer tax rule, and the product category that taxes sales at VAT11"""
    log('taxes')
    Tax = Model.get('account.tax')
    t.taxes = {}
    for tax_type in story['tax_types']:
        tax = Tax(name=tax_type['code'], description=tax_type['name'],
            type='percentage', rate=D(tax_type['rate_percent']) / 100,
            company=t.company, invoice_account=t.accounts['tax'],
            credit_note_account=t.accounts['tax'])
        check(f"{tax_type['code']} active", tax_type['active'],
            'ended_on' not in tax_type)
        if 'ended_on' in tax_type:
            tax.end_date = day(tax_type['ended_on'])
        tax.save()
        t.taxes[tax_type['code']] = tax
    TaxRule = Model.get('account.tax.rule')
    t.exempt_rule = TaxRule(name='EXEMPT', kind='sale', company=t.company)
    t.exempt_rule.lines.new(tax=t.taxes['EXEMPT'])
    t.exempt_rule.save()

    ProductCategory = Model.get('product.category')
    t.goods = ProductCategory(name='Goods', accounting=True,
        account_expense=t.accounts['expense'],
        account_revenue=t.accounts['revenue'])
    t.goods.customer_taxes.append(Tax(t.taxes['VAT11'].id))
    t.goods.save()


def items(t, story):
    """Units (u, kg, l, m, and one UoM per package size: BOX24, ...) and the
    items, priced at their retail list price and their cost"""
    log('units, items')
    Uom = Model.get('product.uom')
    ModelData = Model.get('ir.model.data')
    base_units = {code: Uom(ModelData.get_id(xml_id, t.config.context))
        for code, xml_id in BASE_UNITS.items()}
    t.item_units = {}  # item -> {draftline unit: Tryton UoM}
    packages = {}
    for item in story['items']:
        base = item['base_uom']
        units = {base: base_units[base]}
        for other in item['units']:
            unit, factor = other['uom'], other['factor']
            key = (unit, factor, base)
            if key not in packages:
                base_uom = base_units[base]
                uom = Uom(name=f'{PACKAGE_NAMES[unit]} of {factor}'
                    f'{BASE_NAMES[base]}',
                    symbol=f'{unit}{factor}', category=base_uom.category,
                    rounding=1, digits=0)
                uom.factor = base_uom.factor * factor
                uom.save()
                packages[key] = uom
            units[unit] = packages[key]
        t.item_units[item['code']] = units

    Template = Model.get('product.template')
    t.retail = {(p['item'], p['uom']): p['unit_price']
        for p in story['list_prices'] if p['list'] == 'PL-RETAIL'}
    cost = {(p['item'], p['uom']): p['unit_price'] for p in story['prices']}
    t.products = {}
    for item in story['items']:
        code, base = item['code'], item['base_uom']
        units = t.item_units[code]
        other = units[item['units'][0]['uom']] if item['units'] else units[base]
        template = Template(name=item['name'], code=code, type='goods',
            default_uom=units[base], purchasable=True, salable=True,
            account_category=t.goods,
            list_price=D(t.retail.get((code, base), 0)))
        template.purchase_uom = other
        template.sale_uom = other
        template.save()
        product, = template.products
        product.cost_price = D(cost.get((code, base), 0))
        product.save()
        t.products[code] = product


def branches(t, story):
    """The branches as warehouses, the demo's warehouses as their storage
    locations (the first is the warehouse's own), and each branch's draftline
    number sequences, which start after the documents the seed makes"""
    log('warehouses')
    Location = Model.get('stock.location')
    ModelData = Model.get('ir.model.data')
    SequenceStrict = Model.get('ir.sequence.strict')
    SequenceType = Model.get('ir.sequence.type')
    po_type = SequenceType(ModelData.get_id(
            'purchase.sequence_type_purchase', t.config.context))
    so_type = SequenceType(ModelData.get_id(
            'sale.sequence_type_sale', t.config.context))
    lost_found, = Location.find([('type', '=', 'lost_found')], limit=1)
    po_count, qt_count = {}, {}
    for section in ('jakarta_purchase_orders', 'agent_purchase_orders'):
        documents = story[section]
        po_count[documents['branch']] = (po_count.get(documents['branch'], 0)
            + len(documents['documents']))
    qt_count[story['agent_quotes']['branch']] = len(
        story['agent_quotes']['documents'])
    t.warehouses, t.storages = {}, {}
    for branch in story['branches']:
        id_, code, city = branch['id'], branch['code'], branch['name']
        demo_warehouses = branch['warehouses']
        input_ = Location(name=f'{city} Input', code=f'{id_}-IN',
            type='storage')
        input_.save()
        output = Location(name=f'{city} Output', code=f'{id_}-OUT',
            type='storage')
        output.save()
        storage = Location(name=f'{city} {demo_warehouses[0]}',
            code=demo_warehouses[0], type='storage')
        storage.save()
        po_sequence = SequenceStrict(name=f'Draftline PO {id_}',
            sequence_type=po_type, company=t.company, prefix=f'PO-{code}-',
            padding=6, number_next=po_count.get(id_, 0) + 1)
        po_sequence.save()
        qt_sequence = SequenceStrict(name=f'Draftline quote {id_}',
            sequence_type=so_type, company=t.company, prefix=f'QT-{code}-',
            padding=6, number_next=qt_count.get(id_, 0) + 1)
        qt_sequence.save()
        warehouse = Location(name=f'{city} ({id_})', code=id_,
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
        t.warehouses[id_] = warehouse
        t.storages[demo_warehouses[0]] = storage
        for other in demo_warehouses[1:]:
            extra = Location(name=f'{city} {other}', code=other,
                type='storage', parent=warehouse)
            extra.save()
            t.storages[other] = extra
    t.customer_location, = Location.find([('type', '=', 'customer')],
        limit=1)


def party(code, name, city=None):
    record = Model.get('party.party')(name=name, code=code)
    if city:
        address = record.addresses[0] if record.addresses else (
            record.addresses.new())
        address.city = city
    return record


def party_categories(t, story):
    "A party category per (supplies | customer, branch): who is whose"
    log('vendors, customers, price lists')
    PartyCategory = Model.get('party.category')
    t.categories = {}
    for kind in ('supplies', 'customer'):
        for branch in story['branches']:
            category = PartyCategory(name=f"{kind}:{branch['id']}")
            category.save()
            t.categories[kind, branch['id']] = category


def vendors_and_prices(t, story):
    """The vendors, in the branches they supply, and their price lists: one
    product_supplier per (vendor, item), one price row per unit, the row's
    draftline_unit saying which unit it prices"""
    PartyCategory = Model.get('party.category')
    t.vendors = {}
    for row in story['vendors']:
        vendor = party(row['code'], row['name'])
        vendor.supplier_payment_term = t.terms[row['payment_terms_days']]
        for branch in row['branches']:
            vendor.categories.append(
                PartyCategory(t.categories['supplies', branch].id))
        vendor.save()
        t.vendors[row['code']] = vendor

    ProductSupplier = Model.get('purchase.product_supplier')
    by_pair = OrderedDict()
    for price in story['prices']:
        by_pair.setdefault((price['vendor'], price['item']), []).append(
            (price['uom'], price['unit_price']))
    for (vendor, item), rows in by_pair.items():
        product = t.products[item]
        supplier = ProductSupplier(template=product.template,
            product=product, party=t.vendors[vendor], currency=t.idr)
        for unit, price in rows:
            supplier.prices.new(quantity=0, unit_price=D(price),
                draftline_unit=t.item_units[item][unit])
        supplier.save()


def price_lists(t, story):
    "The sales price lists: one line per (item, unit); the formula is the price"
    PriceList = Model.get('product.price_list')
    t.price_lists = {}
    for name in dict.fromkeys(p['list'] for p in story['list_prices']):
        price_list = PriceList(name=name, company=t.company,
            unit='product_default', tax_included=False)
        for price in story['list_prices']:
            if price['list'] == name:
                item = price['item']
                price_list.lines.new(product=t.products[item],
                    draftline_unit=t.item_units[item][price['uom']],
                    formula=str(price['unit_price']))
        price_list.save()
        t.price_lists[name] = price_list


def customers(t, story):
    """The customers of each branch with their price list, credit limit,
    payment term, tax exemption and credit hold"""
    PartyCategory = Model.get('party.category')
    t.customers = {}
    for row in story['customers']:
        customer = party(row['code'], row['name'], row['city'])
        customer.customer_payment_term = t.terms[row['payment_terms_days']]
        customer.sale_price_list = t.price_lists[row['price_list']]
        customer.credit_limit_amount = D(row['credit_limit'])
        if row['tax_exempt']:
            customer.customer_tax_rule = t.exempt_rule
        if row['credit_hold']:
            customer.draftline_credit_hold = row['credit_hold']
        customer.categories.append(
            PartyCategory(t.categories['customer', row['branch']].id))
        customer.save()
        t.customers[row['code']] = customer


def policies(t, story):
    """Reorder points (stock_supply order points per warehouse): min = reorder
    point, target = reorder point + reorder quantity"""
    OrderPoint = Model.get('stock.order_point')
    for policy in story['policies']:
        point = policy['reorder_point']
        OrderPoint(product=t.products[policy['item']],
            location=t.warehouses[policy['branch']], type='purchase',
            min_quantity=point, target_quantity=point + policy['reorder_qty'],
            company=t.company).save()


def opening_stock(t):
    "The count before the season's receipts and deliveries"
    log('opening stock')
    date, storage, item, quantity = OPENING_COUNT
    count(t, date, {t.storages[storage]: [(t.products[item], quantity)]})


def jakarta_purchase_orders(t, story):
    """Jakarta's purchase orders, made by people: each taken as far as its
    status (quoted, confirmed, received; or cancelled)"""
    log('Jakarta purchase orders')
    Purchase = Model.get('purchase.purchase')
    ShipmentIn = Model.get('stock.shipment.in')
    Move = Model.get('stock.move')
    orders = story['jakarta_purchase_orders']
    warehouse = t.warehouses[orders['branch']]
    for order in orders['documents']:
        number, vendor, status = order['number'], order['vendor'], order['status']
        created = day(order['created_at'][:10])
        purchase = Purchase(party=t.vendors[vendor], warehouse=warehouse,
            currency=t.idr, invoice_method='manual', purchase_date=created,
            delivery_date=day(order['needed_by']), comment=order.get('note'))
        purchase.payment_term = t.vendors[vendor].supplier_payment_term
        total = priced_lines(t, purchase, order['lines'],
            price_index(story['prices'], 'vendor'), vendor, with_source=False)
        purchase.save()
        set_number(t, purchase, number)
        set_provenance(t, purchase,
            drafted_on_behalf_of=orders['drafted_on_behalf_of'],
            draftline_client_ref=order['client_ref'])
        check(f'{number} total', purchase.total_amount, cents(total))
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
            shipment = ShipmentIn(supplier=t.vendors[vendor],
                warehouse=warehouse,
                effective_date=created + dt.timedelta(days=7))
            for move in purchase.moves:
                shipment.incoming_moves.append(Move(move.id))
            shipment.save()
            shipment.click('receive')
            shipment.click('do')
            purchase.reload()
            check(f'{number} shipment', purchase.shipment_state, 'received')


def decided(t, record, decision):
    """A person's decision: Tryton's button, the reason as a note on it.
    approved = Quote pressed (PO status approved, quote approved); rejected =
    Cancel pressed on the draft: Tryton has no rejected state, so the adapter
    reads a PO as cancelled (a quote: rejected)"""
    verdict, reason = decision['verdict'], decision['reason']
    person, at = decision['decided_by'], decision['decided_at']
    t.decided_at[record.__class__.__name__, record.id] = (person, instant(at))
    record.click('quote' if verdict == 'approved' else 'cancel')
    if reason:
        Model.get('ir.note')(resource=record, message=f'{verdict.capitalize()} '
            f'by {person} on {at[:10]}: {reason}').save()


def agent_drafts(t, story):
    """The agents' drafts of the days before, in every review status:
    Surabaya's purchase orders and Bandung's quotes, with their provenance
    and the draftline_key the server would have sent (the story's, checked
    against the server's derivation by a Rust test), numbered as the story
    says; then the instants the story gives them"""
    log('agent drafts (Surabaya POs, Bandung quotes)')
    Purchase = Model.get('purchase.purchase')
    Sale = Model.get('sale.sale')
    t.created_at = {}  # (model, id) -> the story's created_at
    t.decided_at = {}  # (model, id) -> (person, when)

    drafts = story['agent_purchase_orders']
    for draft in drafts['documents']:
        number, vendor = draft['number'], draft['vendor']
        purchase = Purchase(party=t.vendors[vendor],
            warehouse=t.warehouses[drafts['branch']], currency=t.idr,
            invoice_method='manual', delivery_date=day(draft['needed_by']),
            comment=draft['note'])
        purchase.payment_term = t.vendors[vendor].supplier_payment_term
        total = priced_lines(t, purchase, draft['lines'],
            price_index(story['prices'], 'vendor'), vendor, with_source=True)
        purchase.save()
        set_provenance(t, purchase, number=number, draftline_number=number,
            draftline_key=draft['provenance']['draftline_key'],
            draftline_client_ref=draft['provenance']['client_ref'],
            drafted_by_agent_run=draft['provenance']['run_id'],
            drafted_on_behalf_of=drafts['drafted_on_behalf_of'])
        check(f'{number} number', purchase.number, number)
        check(f'{number} total', purchase.total_amount, cents(total))
        if draft['decision']:
            decided(t, purchase, draft['decision'])
        t.created_at['purchase.purchase', purchase.id] = instant(
            draft['created_at'])

    drafts = story['agent_quotes']
    rate = tax_rate(story, drafts['tax_code'])
    price_list_of = {c['code']: c['price_list'] for c in story['customers']}
    for draft in drafts['documents']:
        number, customer = draft['number'], draft['customer']
        list_ = price_list_of[customer]
        quoted = day(draft['created_at'][:10])
        sale = Sale(party=t.customers[customer],
            warehouse=t.warehouses[drafts['branch']], currency=t.idr,
            price_list=t.price_lists[list_], quotation_date=quoted,
            quotation_validity=day(draft['valid_until']) - quoted,
            comment=draft['note'], description=draft['credit_check'])
        sale.payment_term = t.customers[customer].customer_payment_term
        net = priced_lines(t, sale, draft['lines'],
            price_index(story['list_prices'], 'list'), list_, with_source=True)
        sale.save()
        set_provenance(t, sale, number=number, draftline_number=number,
            draftline_key=draft['provenance']['draftline_key'],
            draftline_client_ref=draft['provenance']['client_ref'],
            drafted_by_agent_run=draft['provenance']['run_id'],
            drafted_on_behalf_of=drafts['drafted_on_behalf_of'])
        check(f'{number} number', sale.number, number)
        check(f'{number} taxes', [[tax.name for tax in line.taxes]
                for line in sale.lines], [[drafts['tax_code']]] * len(
                draft['lines']))
        check(f'{number} total', sale.total_amount,
            cents(net) + cents(D(net) * rate))
        check(f'{number} valid until', sale.quotation_expire,
            day(draft['valid_until']))
        if draft['decision']:
            decided(t, sale, draft['decision'])
        t.created_at['sale.sale', sale.id] = instant(draft['created_at'])

    # Tryton sets create_date itself (the seed's clock); the adapter dates
    # an agent draft by it, so the seed writes the story's instants there,
    # by a direct SQL update in a transaction of its own (nothing else of
    # these documents depends on when they were created).
    from trytond.pool import Pool
    from trytond.transaction import Transaction
    with Transaction().start(t.database, 0) as transaction:
        pool = Pool(t.database)
        cursor = transaction.connection.cursor()
        for (model, id_), at in t.created_at.items():
            table = pool.get(model).__table__()
            cursor.execute(*table.update([table.create_date], [at],
                    where=table.id == id_))
        # ... and who decided, when: Tryton keeps the last user who changed
        # a document (write_uid, write_date), which for these is the person
        # of the story's decision (the seed pressed the button as admin)
        for (model, id_), (person, at) in t.decided_at.items():
            table = pool.get(model).__table__()
            cursor.execute(*table.update(
                    [table.write_uid, table.write_date],
                    [t.people[person][0], at],
                    where=table.id == id_))
    for (model, id_), at in t.created_at.items():
        record = Model.get(model)(id_)
        check(f'{model} {id_} create_date', record.create_date, at)
        person, at = t.decided_at.get((model, id_), (None, None))
        check(f'{model} {id_} decided by', record.draftline_decided_by,
            person)


def sales_orders(t, story):
    """The sales orders: each with its one line, at VAT11, at the unit price
    that makes the story's total, and the part shipped (and so invoiced,
    invoice method "on fulfillment") on its day"""
    log('sales orders')
    Sale = Model.get('sale.sale')
    rate = tax_rate(story, 'VAT11')
    t.sale_invoices = {}  # the invoice's number -> the shipment's invoice
    for order in story['sales_orders']:
        number, total = order['number'], order['total']
        item, qty = order['line']['item'], order['line']['qty']
        net = net_for_gross(total, rate)
        sale = Sale(party=t.customers[order['customer']],
            warehouse=t.warehouses[order['branch']],
            sale_date=day(order['order_date']),
            invoice_method='fulfillment', shipment_method='order')
        line = sale.lines.new()
        line.product = t.products[item]
        line.quantity = qty
        line.unit = t.item_units[item][order['line']['uom']]
        line.unit_price = unit_price_for(net, qty)
        sale.save()
        set_number(t, sale, number)
        check(f'{number} taxes', [tax.name for tax in sale.lines[0].taxes],
            ['VAT11'])
        check(f'{number} total', sale.total_amount, D(total))
        sale.click('quote')
        if order['status'] == 'cancelled':
            sale.click('cancel')
            continue
        sale.click('confirm')
        shipped = order.get('shipped')
        if shipped:
            shipment, = sale.shipments
            shipment.effective_date = day(shipped['on'])
            move, = shipment.inventory_moves
            move.quantity = shipped['qty']
            shipment.save()
            shipment.click('assign_try')
            shipment.click('pick')
            shipment.click('pack')
            shipment.click('do')
            sale.reload()
            invoice, = sale.invoices
            check(f'{number} invoice warehouse', invoice.warehouse.code,
                order['branch'])
            if shipped.get('invoice'):
                t.sale_invoices[shipped['invoice']] = invoice
            invoiced = invoice.total_amount
        else:
            invoiced = D(0)
        check(f'{number} not yet invoiced', D(total) - invoiced,
            D(order['open_amount']))


def post_and_pay(t, invoice, number, date, row):
    "Posts an invoice or bill (dated `date`) and pays the story's part of it"
    due, amount, paid = day(row['due_date']), row['amount'], row['paid']
    invoice.click('post')
    check(f'{number} total', invoice.total_amount, D(amount))
    check(f'{number} due date',
        [line.maturity_date for line in invoice.lines_to_pay], [due])
    if paid:
        pay = invoice.click('pay')
        pay.form.payment_method = t.payment_method
        pay.form.date = min(due, date + dt.timedelta(days=10))
        pay.form.amount = D(paid)
        pay.execute('choice')
        if pay.state != 'end':
            # less than the amount to pay: Tryton asks how to book it
            pay.form.type = 'partial'
            pay.execute('pay')
        invoice.reload()
    check(f'{number} amount to pay', invoice.amount_to_pay,
        D(amount) - D(paid))


def invoices(t, story):
    """The customer invoices (posted; some paid in part or in full): a
    shipment's own invoice where the story's sales order made it"""
    log('customer invoices, vendor bills')
    Invoice = Model.get('account.invoice')
    Tax = Model.get('account.tax')
    rate = tax_rate(story, 'VAT11')
    for row in story['invoices']:
        number, customer = row['number'], row['customer']
        if number in t.sale_invoices:
            invoice = t.sale_invoices[number]
        else:
            invoice = Invoice(type='out', party=t.customers[customer],
                warehouse=t.warehouses[row['branch']])
            line = invoice.lines.new()
            line.account = t.accounts['revenue']
            line.description = 'Goods delivered'
            line.quantity = 1
            line.unit_price = net_for_gross(row['amount'], rate)
            line.taxes.append(Tax(t.taxes['VAT11'].id))
        invoice.invoice_date = day(row['invoice_date'])
        invoice.payment_term = t.customers[customer].customer_payment_term
        invoice.save()
        set_number(t, invoice, number)
        post_and_pay(t, invoice, number, day(row['invoice_date']), row)


def bills(t, story):
    "The vendor bills (posted; some paid)"
    Invoice = Model.get('account.invoice')
    for row in story['bills']:
        vendor = row['vendor']
        bill = Invoice(type='in', party=t.vendors[vendor],
            warehouse=t.warehouses[row['branch']],
            invoice_date=day(row['bill_date']))
        bill.payment_term = t.vendors[vendor].supplier_payment_term
        line = bill.lines.new()
        line.account = t.accounts['expense']
        line.description = 'Goods received'
        line.quantity = 1
        line.unit_price = D(row['amount'])
        bill.save()
        set_number(t, bill, row['number'])
        post_and_pay(t, bill, row['number'], day(row['bill_date']), row)


def stock(t, story):
    """The count that leaves the story's on hand (every item, every storage
    location), then the reservations: customer shipments people made,
    assigned (reserved) but not yet picked; then the stock per storage
    location as a connector reads it"""
    log(f'stock count {STOCK_DAY}, reservations')
    on_hand = {(s['warehouse'], s['item']): s['on_hand']
        for s in story['stock']}
    reserved = {(s['warehouse'], s['item']): s['reserved']
        for s in story['stock']}
    count(t, STOCK_DAY, {
            location: [(t.products[item['code']],
                    on_hand.get((w, item['code']), 0))
                for item in story['items']]
            for w, location in t.storages.items()})
    ShipmentOut = Model.get('stock.shipment.out')
    base_unit = {item['code']: item['base_uom'] for item in story['items']}
    first_customer = {}
    for customer in story['customers']:
        first_customer.setdefault(customer['branch'], customer['code'])
    for branch in story['branches']:
        id_ = branch['id']
        reservations = [(s['warehouse'], s['item'], s['reserved'])
            for s in story['stock'] if s['branch'] == id_ and s['reserved']]
        if not reservations:
            continue
        warehouse = t.warehouses[id_]
        shipment = ShipmentOut(customer=t.customers[first_customer[id_]],
            warehouse=warehouse, planned_date=STOCK_DAY)
        for w, item, quantity in reservations:
            check(f'{w} is the storage of {id_}', w, branch['warehouses'][0])
            product = t.products[item]
            move = shipment.outgoing_moves.new(product=product)
            move.unit = product.default_uom
            move.quantity = quantity
            move.from_location = warehouse.output_location
            move.to_location = t.customer_location
            move.unit_price = D(t.retail[item, base_unit[item]])
            move.currency = t.idr
        shipment.save()
        shipment.click('wait')
        shipment.click('assign_try')
        check(f'reservation {id_}', shipment.state, 'assigned')

    Product = Model.get('product.product')
    for w, location in t.storages.items():
        for assign in (False, True):
            with t.config.set_context(locations=[location.id],
                    stock_assign=assign):
                for product in Product.find([]):
                    code = product.code
                    want = on_hand.get((w, code), 0)
                    if assign:
                        want -= reserved.get((w, code), 0)
                    check(f'{w} {code} quantity (stock_assign={assign})',
                        product.quantity, float(want))


def main(conf_file, database, people_file, story_file):
    with open(story_file, encoding='utf-8') as f:
        story = json.load(f)
    config = pconfig.set_trytond(database, config_file=conf_file)
    # the demo's invoices are due in the past: Tryton warns, people confirm
    config.skip_warning = True
    t = SimpleNamespace(config=config, database=database)
    company(t, story)
    people(t, story, people_file)
    ledger(t, story)
    taxes(t, story)
    items(t, story)
    branches(t, story)
    party_categories(t, story)
    vendors_and_prices(t, story)
    price_lists(t, story)
    customers(t, story)
    policies(t, story)
    opening_stock(t)
    jakarta_purchase_orders(t, story)
    agent_drafts(t, story)
    sales_orders(t, story)
    invoices(t, story)
    bills(t, story)
    stock(t, story)
    log('done')


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit('usage: seed.py <trytond.conf> <database> <people-file> '
            '<demo.json>')
    main(*sys.argv[1:])
