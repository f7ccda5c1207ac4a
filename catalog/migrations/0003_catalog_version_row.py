from django.db import migrations


def create_the_version_row(apps, schema_editor):
    CatalogVersion = apps.get_model("catalog", "CatalogVersion")
    CatalogVersion.objects.get_or_create(pk=1, defaults={"version": 0})


class Migration(migrations.Migration):
    dependencies = [("catalog", "0002_operator_flags_and_body_content_type")]

    operations = [migrations.RunPython(create_the_version_row, migrations.RunPython.noop)]
