"""Cloud Storage's JSON API on the local storage root (`routes.py` over `objects.py` and
`uploads.py`): what a client uploads, a replica reads as a file at once, and the other way round.
"""
