"""Source-checkout entry points and committed results of the validations in
:mod:`hsa_elastica.validation` (run ``python -m validation.NAME`` from the checkout root)."""
