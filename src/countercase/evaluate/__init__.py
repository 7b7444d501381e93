"""The evaluation stages: the conditions (ablations), the evaluate, tune and regress stages,
and the regression files."""
