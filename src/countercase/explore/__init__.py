"""The tree explorer: a local web app over a case's perturbation tree (``countercase explore``).

:mod:`~countercase.explore.session` holds what a browser session has (a case, its tree, the
node in view) and does every action; :mod:`~countercase.explore.render` turns it into HTML;
:mod:`~countercase.explore.app` wires Panel's widgets to it and serves it, with the judgments'
sources (:mod:`~countercase.explore.sources`).
"""
