"""The pipeline as code: its stages by name (:mod:`~countercase.dag.stages`), the modules each
stage's command imports (:mod:`~countercase.dag.code`), and the DVC files written from them
(:mod:`~countercase.dag.write`, ``python -m countercase.dag``)."""
