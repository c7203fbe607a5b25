"""``lcrag reproduce``: the parameter profile and each notebook's plan (:mod:`.reproduce`, :mod:`.plan`), what a
study folder declares of its notebooks (:mod:`.notebooks`), dry-run plans on generated data (:mod:`.plan_data`)
and the checks of an executed notebook's outputs (:mod:`.checks`). The notebooks run through :mod:`lcrag.runtime`."""
