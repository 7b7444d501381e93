"""The corpus stages at the scale of the whole Supreme Court open dataset: a sharded dataflow
(:mod:`~countercase.scaleout.dataflow`) on an engine (:mod:`~countercase.scaleout.engine`:
this process, or Dask), and its benchmark and capacity plan (:mod:`~countercase.scaleout.bench`).
``dvc repro`` keeps the single-process stages; ``countercase scaleout`` runs this path."""
