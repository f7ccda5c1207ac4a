from django import template

from credits.selectors import purchases_for_account

register = template.Library()

RECENT_PURCHASES = 10


@register.inclusion_tag("dashboard/_purchases.html", takes_context=True)
def recent_purchases(context, account):
    """The account's latest purchases with a link to each receipt, for the balance page: a
    part of the page that reads its own rows, so the balance view needs no change for it."""
    return {
        "purchases": list(purchases_for_account(account=account)[:RECENT_PURCHASES]),
        "account_context": context.get("account_context"),
        "time_zone": context.get("time_zone"),
    }
