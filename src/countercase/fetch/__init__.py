"""Fetch the Indian Supreme Court Judgments open dataset (the AWS open-data bucket
``indian-supreme-court-judgments``) for the years asked, into the local layout that
``countercase ingest --sc-root`` reads (:mod:`countercase.ingest.sc_opendata`).

:mod:`~countercase.fetch.s3` lists and downloads with anonymous S3 access (boto3): every object
goes to ``<name>.part``, a partial one is continued by a ranged request (or fetched anew when the
object changed), it is checked against the listed size (and the MD5 where the ETag is one), and
only then renamed into place, so nothing half-written is ever read. A second run fetches nothing
that is already there and whole.
"""
