"""Source-checkout entry points and committed results of the validations in
:mod:`hsa_elastica.validation` (run ``python -m validation.NAME`` from the checkout root)."""


def with_defaults(argv: list[str], defaults: list[str], output_options: tuple[str, ...]) -> list[str]:
    """``defaults + argv`` (the options that regenerate the committed files), or ``argv``
    unchanged when it names any of ``output_options``: a run told where to write writes only
    there, never half into the checkout."""
    if any(a == o or a.startswith(o + "=") for a in argv for o in output_options):
        return list(argv)
    return [*defaults, *argv]
