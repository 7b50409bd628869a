"""Platform services: the review workflow as plain functions over a SQLAlchemy session.

The web routes and the CLI are thin layers over these; tests drive them directly as well.
"""
