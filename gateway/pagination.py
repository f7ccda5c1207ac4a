"""What every paginated list accepts as its offset."""

from rest_framework import serializers

from gateway.inputs import DigitsIntegerField

# Past any list the gateway holds and inside every database's integer range: PostgreSQL fails a
# query whose offset is beyond a bigint, which must be the caller's 400, not a server error.
MAX_OFFSET = 2**31 - 1


def offset_field(**kwargs) -> serializers.IntegerField:
    return DigitsIntegerField(min_value=0, max_value=MAX_OFFSET, default=0, **kwargs)
