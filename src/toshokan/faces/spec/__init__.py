"""The spec's JSON interface at ``/``, with its OpenAPI document and Swagger UI docs at ``/_/docs``."""
