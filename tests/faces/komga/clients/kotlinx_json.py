"""Decoding JSON the way Mihon's kotlinx.serialization does, for the extension's and tracker's models.

Mihon hands one ``Json`` to the app and, through Injekt, to every extension
(mihonapp/mihon ``app/src/main/java/mihon/app/di/AppBindings.kt``,
``providesJson``; ``di/injekt/MetroInteropModule.kt`` registers the same
instance): ``Json { ignoreUnknownKeys = true; explicitNulls = false }``. So:

- an unknown key is skipped;
- a property that is not nullable and has no default is required: a missing
  one is a ``MissingFieldException``, a ``null`` one fails too
  (``coerceInputValues`` is off);
- a nullable property without a default may be missing (``explicitNulls =
  false`` reads absence as ``null``);
- a property with a default takes it when missing.

Scalars, as the streaming decoder reads them (Kotlin/kotlinx.serialization
``formats/json/commonMain/src/kotlinx/serialization/json/internal/StreamingJsonDecoder.kt``
and ``internal/lexer/AbstractJsonLexer.kt``; the configuration is not
lenient):

- ``String`` (``consumeString``): a quoted JSON string only; a number, a
  boolean or ``null`` fails.
- ``Int``/``Long`` (``consumeNumericLiteral``): digits with an optional
  leading ``-`` and exponent, quoted or not; a fraction (``1.0``) fails, an
  exponent must give a whole number, and ``Int`` must fit 32 bits.
- ``Float``/``Double`` (``consumeStringLenient`` then Kotlin's
  ``toFloat``/``toDouble``, i.e. Java's ``parseFloat``/``parseDouble``): a
  number or a string holding one; a result that is not finite fails. A
  ``Float`` is 32 bits: ``1.1`` reads as 1.100000023841858.
- ``Boolean`` (``consumeBooleanLenient``): ``true``/``false`` in any case,
  quoted or not.

Not modelled: Java's hexadecimal float literals and non-ASCII digits (Jackson
never writes either).
"""

import json
import math
import re
import struct
from decimal import Decimal
from typing import Annotated, Any, NoReturn, Self, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, TypeAdapter

T = TypeVar("T")


class JsonNumberLiteral:
    """A JSON number as written, so Int/Float decoding can judge the text the way the lexer does."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"unexpected token {name}")


def load_json(text: str | bytes) -> Any:
    """Parse JSON keeping numbers as their text (``NaN``/``Infinity`` are not JSON and fail)."""
    return json.loads(
        text,
        parse_int=JsonNumberLiteral,
        parse_float=JsonNumberLiteral,
        parse_constant=_no_constants,
    )


def _string(value: object) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"Expected quotation mark '\"', but had {value!r} instead")


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"Expected valid boolean literal prefix, but had {value!r}")


_INTEGER = re.compile(r"-?([0-9]+)(?:[eE]([+-]?)([0-9]*))?")


def _numeric_literal(value: object) -> int:
    if isinstance(value, JsonNumberLiteral):
        text = value.text
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(f"Expected numeric literal, but had {value!r}")
    match = _INTEGER.fullmatch(text)
    if match is None:
        raise ValueError(f"Unexpected symbol in numeric literal {text!r}")
    digits, sign, exponent = match.groups()
    number = int(digits)
    if exponent:
        power = int(exponent)
        if sign == "-":
            scaled, remainder = divmod(number, 10**power)
            if remainder:
                raise ValueError(f"Can't convert {text} to Long")
            number = scaled
        else:
            number *= 10**power
    if text.startswith("-"):
        number = -number
    if not -(2**63) <= number < 2**63:
        raise ValueError("Numeric value overflow")
    return number


def _long(value: object) -> int:
    return _numeric_literal(value)


def _int(value: object) -> int:
    number = _numeric_literal(value)
    if not -(2**31) <= number < 2**31:
        raise ValueError(f"Failed to parse int for input '{number}'")
    return number


# Java's FloatingDecimal grammar, decimal forms: optional sign, digits with an
# optional point, optional exponent, an optional type suffix; or NaN/Infinity.
_JAVA_FLOAT = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)"
)


def _java_parse_double(value: object, type_name: str) -> float:
    if isinstance(value, JsonNumberLiteral):
        text = value.text
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(f"Expected {type_name}, but had {value!r}")
    stripped = text.strip(" \t\n\r\x0b\x0c\x00")  # String.trim: every char <= ' '
    if not _JAVA_FLOAT.fullmatch(stripped):
        raise ValueError(f"Failed to parse type '{type_name}' for input '{text}'")
    return float(stripped.rstrip("fFdD"))


def _double(value: object) -> float:
    number = _java_parse_double(value, "double")
    if not math.isfinite(number):
        raise ValueError(f"Unexpected special floating-point value {number}")
    return number


def to_float32(number: float) -> float:
    """The nearest 32-bit float, as Kotlin's ``Float`` holds it (infinite past its range)."""
    if math.isfinite(number) and abs(number) >= 2**128 * (1 - 2**-25):
        return math.copysign(math.inf, number)
    return float(struct.unpack("<f", struct.pack("<f", number))[0])


def _float(value: object) -> float:
    number = to_float32(_java_parse_double(value, "float"))
    if not math.isfinite(number):
        raise ValueError(f"Unexpected special floating-point value {number}")
    return number


KString = Annotated[str, PlainValidator(_string)]
KBoolean = Annotated[bool, PlainValidator(_boolean)]
KInt = Annotated[int, PlainValidator(_int)]
KLong = Annotated[int, PlainValidator(_long)]
KFloat = Annotated[float, PlainValidator(_float)]
KDouble = Annotated[float, PlainValidator(_double)]


class KotlinxModel(BaseModel):
    """A ``@Serializable`` class decoded with Mihon's ``Json``: unknown keys ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @classmethod
    def decode(cls, text: str | bytes) -> Self:
        return cls.model_validate(load_json(text))


def decode_as(shape: Any, text: str | bytes) -> Any:
    """Decode a top-level shape that is not a class (``List<PageDto>``, ``Set<String>``)."""
    return TypeAdapter(shape).validate_python(load_json(text))


def kotlin_double_string(number: float) -> str:
    """``Double.toString``, as kotlinx writes a ``Double`` into a request body (``3.0``, ``1.0E7``)."""
    if number == 0:
        return "-0.0" if math.copysign(1, number) < 0 else "0.0"
    sign = "-" if number < 0 else ""
    shortest = Decimal(repr(abs(number))).normalize()
    if 1e-3 <= abs(number) < 1e7:
        whole, _, fraction = f"{shortest:f}".partition(".")
        return f"{sign}{whole}.{fraction or '0'}"
    _, digits, exponent = shortest.as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return f"{sign}{text[0]}.{text[1:] or '0'}E{exponent + len(text) - 1}"
