# draftline: provenance of agent drafts in Tryton (see MAPPING.md).
# Classes are registered from tryton.cfg ([register]), as trytond 8 does.
