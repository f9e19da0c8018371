"""Where draftline's review pages are, so Tryton's own forms link an agent
draft to the run that made it (`drafted_by_agent_run_url`, common.py).

One value per database: the base URL of the review pages,
`https://draftline.example.com/review` (the local `draftline serve` writes
`http://127.0.0.1:<port>/review` at start). Empty: no run link.
"""
from urllib.parse import quote, urlsplit

from trytond.exceptions import UserError
from trytond.i18n import gettext
from trytond.model import ModelSingleton, ModelSQL, ModelView, fields
from trytond.pool import Pool
from trytond.transaction import without_check_access


class Configuration(ModelSingleton, ModelSQL, ModelView):
    __name__ = 'draftline.configuration'
    review_url = fields.Char(
        "Review Pages",
        help="The base URL of draftline's review pages, e.g. "
        "https://draftline.example.com/review. An agent draft's run link "
        "is <this URL>/runs/<agent run>.")

    @classmethod
    def validate_fields(cls, records, field_names):
        super().validate_fields(records, field_names)
        if field_names and 'review_url' not in field_names:
            return
        for record in records:
            if record.review_url:
                parts = urlsplit(record.review_url)
                if parts.scheme not in {'http', 'https'} or not parts.netloc:
                    raise UserError(gettext(
                            'draftline.msg_draftline_review_url_invalid',
                            url=record.review_url))


def run_url(run):
    "The review page of agent run `run`, or None without a configured URL"
    if not run:
        return None
    Configuration = Pool().get('draftline.configuration')
    # Everyone who may read the document may follow its run link: the
    # configuration is read here whatever the user's own access to it.
    with without_check_access():
        base = Configuration(1).review_url
    if not base:
        return None
    return f"{base.rstrip('/')}/runs/{quote(run, safe='')}"
