"""Static files as `make run` and production serve them: WhiteNoise's compressed copies under
hashed names, which browsers may cache for ever.

The names come from the manifest that ``collectstatic`` writes. Before it has run (the test
suite, a development server), pages still render, with the files' plain names: WhiteNoise's own
storage refuses to render a page that names a static file it has no manifest entry for.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    def stored_name(self, name: str) -> str:
        if not self.hashed_files:  # no manifest: collectstatic has not run
            return name
        return super().stored_name(name)
