"""The cost of CEL validation rules, as kube-apiserver bounds it: a parser of CEL
(:mod:`.syntax`), the types a schema gives ``self`` (:mod:`.decltypes`), cel-go's cost estimate
(:mod:`.estimate`, :mod:`.calls`), the limits a CustomResourceDefinition's rules must keep
(:mod:`.limits`) and the budget of evaluating an object's rules (:mod:`.runtime`)."""
