"""What every paginated list accepts as its offset."""

from rest_framework import serializers

# Past any list the gateway holds and inside every database's integer range: an offset beyond a
# bigint made PostgreSQL fail the query instead of the caller getting a 400 naming the field.
MAX_OFFSET = 2**31 - 1


def offset_field(**kwargs) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0, **kwargs)
