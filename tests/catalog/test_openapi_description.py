import pytest


@pytest.mark.django_db
def test_the_discovery_routes_are_documented_with_their_parameters(client):
    schema = client.get("/v1/openapi.json").json()
    listing = schema["paths"]["/v1/list-endpoints"]["get"]
    assert {param["name"] for param in listing["parameters"]} == {
        "limit",
        "offset",
        "verified",
        "isPayable",
    }
    limit = next(param for param in listing["parameters"] if param["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 500)
    assert {"200", "400", "401"} <= set(listing["responses"])
    for path in ("/v1/details", "/v1/integrate"):
        operation = schema["paths"][path]["post"]
        assert {"200", "400", "401", "404"} <= set(operation["responses"])
    integrate_input = schema["components"]["schemas"]["EndpointIntegrateInputRequest"]
    assert integrate_input["properties"]["format"]["allOf"] == [
        {"$ref": "#/components/schemas/SnippetFormatEnum"}
    ]
    assert schema["components"]["schemas"]["SnippetFormatEnum"]["enum"] == [
        "gw-sdk",
        "run-api",
        "curl",
        "x402-fetch",
        "x402-python",
        "all",
    ]
