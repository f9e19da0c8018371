"""Prices per unit.

The demo's price lists price an item per unit (BRG-0042: 12 500 per PCS and
288 000 per BOX of 24), and a unit's own price wins over the base price times
the conversion. Tryton prices a supplier row in the purchase unit and a price
list line in the product's default unit, so `draftline_unit` says "this row
is the price of one <unit>, and applies only to lines in that unit". Empty
keeps Tryton's own meaning. The overrides below make Tryton's own pricing (the
client's on_change) give the same prices as draftline.
"""
from trytond.model import fields
from trytond.modules.product import round_price
from trytond.pool import Pool, PoolMeta
from trytond.pyson import Eval
from trytond.transaction import Transaction

_UNIT_HELP = (
    "When set, the price is per this unit and applies only to lines in "
    "this unit.")


class PriceList(metaclass=PoolMeta):
    __name__ = 'product.price_list'

    def compute(self, product, quantity, uom, pattern=None):
        pool = Pool()
        Uom = pool.get('product.uom')
        base = self.get_uom(product) if product else None
        tries = [uom]
        if product and uom and uom != product.default_uom:
            # no price for the unit: the base unit's price x the conversion
            tries.append(product.default_uom)
        price = None
        for unit in tries:
            unit_pattern = dict(pattern or {})
            unit_pattern['draftline_unit'] = unit.id if unit else None
            line = self._draftline_matched_line(
                product, quantity, uom, unit_pattern)
            if line is None:
                continue
            price = super().compute(
                product, quantity, uom, pattern=unit_pattern)
            if (price is not None and line.draftline_unit and base
                    and line.draftline_unit != base):
                # The callers convert from get_uom(product) to the unit.
                price = Uom.compute_price(line.draftline_unit, price, base)
            break
        return price

    def _draftline_matched_line(self, product, quantity, uom, pattern):
        "The line compute() used (the same matching as Tryton's)"
        Uom = Pool().get('product.uom')
        pattern = pattern.copy()
        if product:
            categories = []
            for category in product.categories_all:
                while category:
                    categories.append(category.id)
                    category = category.parent
            pattern['categories'] = categories
            pattern['product'] = product.id
        pattern['quantity'] = Uom.compute_qty(
            uom, quantity, self.get_uom(product),
            round=False) if product else quantity
        for line in self.lines:
            if line.match(pattern):
                return line


class PriceListLine(metaclass=PoolMeta):
    __name__ = 'product.price_list.line'
    draftline_unit = fields.Many2One(
        'product.uom', "Unit", ondelete='RESTRICT', help=_UNIT_HELP)


class ProductSupplierPrice(metaclass=PoolMeta):
    __name__ = 'purchase.product_supplier.price'
    draftline_unit = fields.Many2One(
        'product.uom', "Price Unit", ondelete='RESTRICT',
        domain=[
            ('category', '=', Eval('draftline_unit_category', -1)),
            ],
        help=_UNIT_HELP)
    draftline_unit_category = fields.Function(
        fields.Many2One('product.uom.category', "Unit Category"),
        'on_change_with_draftline_unit_category')

    @fields.depends('product_supplier', '_parent_product_supplier.unit')
    def on_change_with_draftline_unit_category(self, name=None):
        if self.product_supplier and self.product_supplier.unit:
            return self.product_supplier.unit.category

    def match(self, quantity, unit, pattern):
        if self.draftline_unit and unit and self.draftline_unit != unit:
            return False
        return super().match(quantity, unit, pattern)


class Product(metaclass=PoolMeta):
    __name__ = 'product.product'

    @classmethod
    def get_purchase_price(cls, products, quantity=0):
        "A row with draftline_unit is already the price of one line unit"
        pool = Pool()
        Uom = pool.get('product.uom')
        Company = pool.get('company.company')
        Currency = pool.get('currency.currency')
        ProductSupplier = pool.get('purchase.product_supplier')
        ProductSupplierPrice = pool.get('purchase.product_supplier.price')
        prices = super().get_purchase_price(products, quantity=quantity)
        context = Transaction().context
        uom = Uom(context['uom']) if context.get('uom') else None
        currency = None
        if context.get('currency'):
            currency = Currency(context['currency'])
        elif context.get('company'):
            currency = Company(context['company']).currency
        for product in products:
            if not uom or product.default_uom.category != uom.category:
                continue
            suppliers = product.product_suppliers_used(
                **ProductSupplier.get_pattern())
            product_supplier = next(suppliers, None)
            if not product_supplier:
                continue
            pattern = ProductSupplierPrice.get_pattern()

            def last_match(unit):
                matched = None
                for price in product_supplier.prices:
                    if price.match(quantity, unit, pattern):
                        matched = price
                return matched
            matched = last_match(uom)
            if matched and matched.draftline_unit:
                unit_price = matched.unit_price
            elif not matched and uom != product.default_uom:
                # no price for the unit: the base unit's price x the
                # conversion
                matched = last_match(product.default_uom)
                if not matched or not matched.draftline_unit:
                    continue
                unit_price = Uom.compute_price(
                    product.default_uom, matched.unit_price, uom)
            else:
                continue
            if currency and product_supplier.currency != currency:
                unit_price = Currency.compute(
                    product_supplier.currency, unit_price, currency,
                    round=False)
            prices[product.id] = round_price(unit_price)
        return prices
