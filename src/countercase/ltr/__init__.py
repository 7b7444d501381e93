"""The learned ranker's training (stage ``train_ltr``): LightGBM lambdarank over the features of
:mod:`countercase.retrieve.features`, by ``configs/ltr_rule.yaml``; serving is
:mod:`countercase.retrieve.ltr`."""
