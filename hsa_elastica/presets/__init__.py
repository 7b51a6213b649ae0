"""Named parameter presets shipped as YAML (see ``hsa_elastica.params.PRESETS``)."""
