"""Requests and images have separate budgets per client; health and preflights spend none."""

import logging

import pytest

from toshokan.edge.paths import BudgetKind, PathBudgets
from toshokan.edge.ratelimit import LocalBudget
from toshokan.faces import FACES

pytestmark = pytest.mark.anyio


async def test_images_have_their_own_budget(make_host):
    limits = {"rate_limit": 3, "image_rate_limit": 5}
    async with make_host(limits=limits) as host:
        api = [(await host.client.get("/catalog")).status_code for _ in range(4)]
        images = [(await host.client.get(f"/_/catalog/pages/{n}")).status_code for n in range(6)]
        health = [(await host.client.get("/catalog/health")).status_code for _ in range(5)]
    assert api == [200, 200, 200, 429]
    assert images == [200] * 5 + [429]
    assert health == [200] * 5


async def test_a_long_chapter_reads_through_with_the_default_budgets(make_host):
    async with make_host() as host:
        pages = {(await host.client.get(f"/_/catalog/pages/{n}")).status_code for n in range(150)}
        api = await host.client.get("/catalog")
    assert pages == {200} and api.status_code == 200


async def test_over_budget_answer_is_the_error_object_with_retry_after(make_host):
    async with make_host(limits={"rate_limit": 1}) as host:
        await host.client.get("/")
        limited = await host.client.get("/", headers={"Origin": "https://reader.example"})
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.headers["access-control-allow-origin"] == "*"  # a browser may read it


@pytest.mark.parametrize(
    ("path", "budget"),
    [
        ("/catalog/search", BudgetKind.REQUESTS),
        ("/", BudgetKind.REQUESTS),
        ("/catalog/health", BudgetKind.EXEMPT),
        ("/health/health", BudgetKind.EXEMPT),
        ("/catalog/title/health", BudgetKind.REQUESTS),
        ("/_/catalog/pages/3", BudgetKind.IMAGES),
        ("/_/local/covers/a-title", BudgetKind.IMAGES),
        ("/_/image", BudgetKind.IMAGES),
        ("/_/image/abc", BudgetKind.IMAGES),
        ("/_/opds/local/series/a-title/ch-1/pages/0", BudgetKind.IMAGES),
        ("/_/opds/local/series/a-title/ch-1", BudgetKind.REQUESTS),
        ("/_/assets/app.0123abcd.js", BudgetKind.IMAGES),
        ("/_/docs/assets/swagger-ui.css", BudgetKind.IMAGES),
        ("/_/opds/v2/catalog", BudgetKind.REQUESTS),
        ("/_/docs", BudgetKind.REQUESTS),
        ("/_/alethia/catalog/search", BudgetKind.REQUESTS),
        ("/openapi.json", BudgetKind.REQUESTS),
        ("/_/imagery/x", BudgetKind.IMAGES),  # a source slugged "imagery"
        ("/_/docs/asset.css", BudgetKind.REQUESTS),
        ("/_/", BudgetKind.REQUESTS),
    ],
)
def test_budget_of_path(path, budget):
    assert PathBudgets(FACES).of(path) is budget


def test_local_budget_allows_a_burst_then_one_per_interval():
    budget = LocalBudget(60)  # one a second once the burst is spent
    assert all(budget.take("a", 100.0) is None for _ in range(60))
    wait = budget.take("a", 100.0)
    assert wait is not None and 0.9 < wait <= 1.0
    assert budget.take("b", 100.0) is None  # another client is unaffected
    assert budget.take("a", 101.0) is None
    assert budget.take("a", 101.0) is not None


def test_local_budget_memory_is_bounded():
    budget = LocalBudget(10, max_clients=100)
    for n in range(1000):
        budget.take(f"client-{n}", 50.0)
    assert len(budget._full_at) <= 100


def test_trusted_proxy_memo_is_bounded():
    from toshokan.edge.proxy import MEMO_SIZE, TrustedProxies

    proxies = TrustedProxies(["10.0.0.0/8"])
    assert proxies.trusts("10.1.2.3") and not proxies.trusts("192.0.2.1")
    assert not proxies.trusts("not an address") and not proxies.trusts(None)
    for n in range(MEMO_SIZE + 10):
        proxies.trusts(f"192.0.{n // 256 % 256}.{n % 256}")
    assert len(proxies._memo) <= MEMO_SIZE


async def test_forwarded_client_address_is_escaped_before_it_is_logged(
    make_host, caplog, access_lines
):
    async with make_host(
        server={"trusted_proxies": ["203.0.113.7"]}, limits={"rate_limit": 2}
    ) as host:
        edge = host.app.middleware_stack
        seen: list[str] = []
        inner = edge.app

        async def capture(scope, receive, send):
            seen.append(scope["client"][0])
            await inner(scope, receive, send)

        edge.app = capture
        lines, handler = access_lines
        caplog.set_level(logging.INFO, logger="toshokan.access")
        await host.client.get("/catalog", headers={"X-Forwarded-For": 'evil"\x1b[2J'})
        handler.flush()
    assert seen == ["evil\\x22\\x1b[2J"]
    assert 'INFO toshokan.access: evil\\x22\\x1b[2J "GET /catalog" 200' in "".join(lines)


async def test_a_head_or_a_304_costs_a_tenth_of_a_full_answer(make_host):
    """Ten HEADs, or ten GETs the client already had (304), cost what one full answer does."""
    async with make_host(limits={"rate_limit": 4}) as host:
        first = await host.client.get("/catalog")
        tag = first.headers["etag"]
        heads = [(await host.client.head("/catalog")).status_code for _ in range(10)]
        kept = [
            (await host.client.get("/catalog", headers={"If-None-Match": tag})).status_code
            for _ in range(10)
        ]
        last = await host.client.get("/catalog")
        over = await host.client.head("/catalog")
    assert first.status_code == 200
    assert heads == [200] * 10 and kept == [304] * 10
    assert last.status_code == 200  # 1 + 10 tenths + 10 tenths + 1 = 4
    assert over.status_code == 429


async def test_a_conditional_get_answered_in_full_costs_a_full_answer(make_host):
    async with make_host(limits={"rate_limit": 2}) as host:
        stale = {"If-None-Match": '"not-what-the-host-has"'}
        answers = [(await host.client.get("/catalog", headers=stale)).status_code for _ in range(3)]
    assert answers == [200, 200, 429]


def test_a_light_take_spends_a_tenth():
    budget = LocalBudget(1)  # the burst is the one request
    assert all(budget.take("a", 10.0, cost=1) is None for _ in range(10))
    assert budget.take("a", 10.0, cost=1) is not None
