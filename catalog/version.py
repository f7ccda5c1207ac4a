"""The catalog version: the number every catalog write moves on (catalog.services'
catalog_version_bump). The route cache, the list-endpoints cache and the search index key on
it, so a change is seen everywhere. Its own module, below both selectors and search."""

from catalog.models import CatalogVersion


def catalog_version_current() -> int:
    version = CatalogVersion.objects.filter(pk=1).values_list("version", flat=True).first()
    return version or 0
