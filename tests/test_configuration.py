"""Configuration: file, environment, flags, plugins, and start-up validation of sources."""

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.plugins import activate, install_plugin
from toshokan.cli import main
from toshokan.config import load_settings
from toshokan.core.face import names_of
from toshokan.core.hosted import ConfigurationError, HostedSources
from toshokan.faces import FACES
from toshokan.registry import AdapterLoadError, adapter, installed_adapters

pytestmark = pytest.mark.anyio


@pytest.fixture
def plugin_site(tmp_path, monkeypatch):
    site = install_plugin(tmp_path / "site")
    install_plugin(site, "broken", "no_such_module_xyz:Nothing")
    install_plugin(site, "notasource", "json:loads")
    activate(site)
    yield site
    sys.path.remove(str(site))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toshokan.toml"
    path.write_text(text)
    return path


def test_precedence_file_env_flags(tmp_path, monkeypatch):
    config = write(
        tmp_path, '[server]\nport = 9001\nhost = "0.0.0.0"\n[sources.catalog]\ntitles = 3\n'
    )
    assert load_settings(config).server.port == 9001
    monkeypatch.setenv("TOSHOKAN_SERVER__PORT", "9002")
    monkeypatch.setenv("TOSHOKAN_SOURCES__CATALOG__TITLES", "7")
    monkeypatch.setenv("TOSHOKAN_SERVER__TRUSTED_PROXIES", '["10.0.0.0/8"]')
    settings = load_settings(config)
    assert settings.server.port == 9002 and settings.server.host == "0.0.0.0"
    assert settings.sources["catalog"].adapter_settings() == {"titles": 7}
    assert settings.server.trusted_proxies == ["10.0.0.0/8"]
    assert load_settings(config, server={"port": 9003}).server.port == 9003


def test_unknown_keys_are_refused(tmp_path):
    with pytest.raises(Exception, match="prot"):
        load_settings(write(tmp_path, "[server]\nprot = 1\n"))
    with pytest.raises(Exception, match="name"):
        load_settings(write(tmp_path, '[host]\nname = "Bad Name"\n'))


def test_entry_point_discovery(plugin_site):
    assert adapter("catalog").__name__ == "Catalog"
    with pytest.raises(AdapterLoadError, match="no_such_module_xyz"):
        adapter("broken")
    with pytest.raises(AdapterLoadError, match="not a toshokan Source"):
        adapter("notasource")
    with pytest.raises(AdapterLoadError, match=r"installed: .*catalog"):
        adapter("missing")


async def test_host_from_settings_with_plugin(plugin_site, tmp_path):
    settings = load_settings(
        None,
        host={"data_dir": str(tmp_path)},
        sources={"shelf": {"adapter": "catalog", "titles": 2}},
    )
    host = HostedSources.from_settings(settings)
    await host.startup()
    try:
        assert host.manifest().sources == ["shelf"]
    finally:
        await host.shutdown()


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (
            {"Bad": {"adapter": "catalog"}},
            "source 'Bad': a source slug is lowercase letters a-z only",
        ),
        ({"opds": {"adapter": "catalog"}}, "source 'opds': the host serves /_/opds itself"),
        ({"shelf": {"adapter": "nope"}}, "source 'shelf': no source adapter named 'nope'"),
        ({"shelf": {"adapter": "catalog", "titles": "many"}}, "source 'shelf': settings titles"),
        ({"shelf": {"adapter": "catalog", "colour": "red"}}, "colour"),
        ({"shelf": {"adapter": "broken"}}, "failed to import"),
    ],
)
def test_bad_source_configuration_names_the_problem(plugin_site, tmp_path, sources, message):
    settings = load_settings(None, host={"data_dir": str(tmp_path)}, sources=sources)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        HostedSources.from_settings(settings, face_names=names_of(FACES))


async def test_invalid_declared_configuration_stops_startup(plugin_site, tmp_path, monkeypatch):
    from tests.helpers.catalog import Catalog
    from toshokan.models import SearchConfig

    original = Catalog.configuration

    def no_tags(self):
        config = original(self)
        config.search = SearchConfig.model_construct(
            sort=config.search.sort, filters=config.search.filters, tags=[]
        )
        return config

    monkeypatch.setattr(Catalog, "configuration", no_tags)
    settings = load_settings(
        None, host={"data_dir": str(tmp_path)}, sources={"shelf": {"adapter": "catalog"}}
    )
    host = HostedSources.from_settings(settings)
    with pytest.raises(
        ConfigurationError, match=r"source 'shelf': search: .*search.tags must be non-empty"
    ):
        await host.startup()


async def test_auth_readers_is_the_hosts_and_declares_a_basic_sign_in(plugin_site, tmp_path):
    from tests.helpers.catalog import Catalog

    config = write(
        tmp_path,
        f'[host]\ndata_dir = "{tmp_path}"\n[sources.shelf]\nadapter = "catalog"\nauth = "readers"\n',
    )
    host = HostedSources.from_settings(load_settings(config))
    await host.startup()
    try:
        hosted = host.get("shelf")
        assert hosted.accepts_readers
        assert isinstance(hosted.source, Catalog)
        assert hosted.source.conf.auth == "none"  # the adapter serves it open
        auth = hosted.configuration().auth
        assert (auth.type, auth.required, auth.fields) == ("basic", True, ["username", "password"])
    finally:
        await host.shutdown()


async def test_auth_readers_on_an_adapter_that_locks_itself_stops_startup(
    plugin_site, tmp_path, monkeypatch
):
    from tests.helpers.catalog import Catalog
    from toshokan.models import AuthConfig, AuthType

    original = Catalog.configuration

    def own_key(self):
        config = original(self)
        config.auth = AuthConfig(type=AuthType.API_KEY, required=True)
        return config

    monkeypatch.setattr(Catalog, "configuration", own_key)
    settings = load_settings(
        None,
        host={"data_dir": str(tmp_path)},
        sources={"shelf": {"adapter": "catalog", "auth": "readers"}},
    )
    host = HostedSources.from_settings(settings)
    with pytest.raises(ConfigurationError, match="auth = 'readers' needs an adapter that is open"):
        await host.startup()


def test_cli_check_config(plugin_site, tmp_path):
    runner = CliRunner()
    good = write(
        tmp_path, f'[host]\ndata_dir = "{tmp_path}"\n[sources.shelf]\nadapter = "catalog"\n'
    )
    result = runner.invoke(main, ["check-config", str(good)])
    assert result.exit_code == 0, result.output
    assert "OK (1 source(s): shelf)" in result.output
    bad = write(
        tmp_path,
        f'[host]\ndata_dir = "{tmp_path}"\n[sources.shelf]\nadapter = "catalog"\ntitles = "x"\n',
    )
    result = runner.invoke(main, ["check-config", str(bad)])
    assert result.exit_code == 2 and "source 'shelf'" in result.output and "titles" in result.output


def test_a_cluster_database_is_a_postgresql_url(tmp_path):
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path}"\n[cluster]\ndatabase = "mysql://db/toshokan"\n'
        f'[sources.local]\nroot = "{tmp_path}"\n'
    )
    result = CliRunner().invoke(main, ["check-config", str(config)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "toshokan: configuration error: cluster.database: "
        "Value error, a PostgreSQL URL starts with postgresql://"
    ]


def test_cli_help_explains_configuration():
    runner = CliRunner()
    top = runner.invoke(main, ["--help"]).output
    serve = runner.invoke(main, ["serve", "--help"]).output
    for text in (
        "TOSHOKAN_",
        "[server]",
        "trusted_proxies",
        "[sources.<slug>]",
        "rate_limit",
        "database (postgresql://",
        "[keep]    folder (where kept copies",
    ):
        assert text in top
    for option in ("--config", "--library", "--host", "--port", "--rate-limit"):
        assert option in serve


def test_cli_lists_sources(plugin_site):
    output = CliRunner().invoke(main, ["sources"]).output
    assert "in-memory test catalog" in output
    assert "broken       BROKEN" in output and "no_such_module_xyz" in output
    found, broken = installed_adapters()
    assert "catalog" in found and {"broken", "notasource"} <= set(broken)


def test_serve_takes_the_configuration_named_before_it(tmp_path):
    """`toshokan --config F serve` reads F, as `toshokan serve --config F` does: a missing
    file stops it with one line rather than serving the embedded default."""
    missing = tmp_path / "missing.toml"
    for args in (["--config", str(missing), "serve"], ["serve", "--config", str(missing)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code != 0, args
        assert f"configuration file {missing} does not exist" in result.output, args


def test_check_config_refuses_a_keep_folder_no_library_serves(tmp_path):
    library, elsewhere = tmp_path / "library", tmp_path / "elsewhere"
    library.mkdir()
    config = tmp_path / "toshokan.toml"
    table = f'[host]\ndata_dir = "{tmp_path}"\n[sources.local]\nroot = "{library}"\n'
    config.write_text(f'{table}[keep]\nfolder = "{elsewhere}"\n')
    result = CliRunner().invoke(main, ["check-config", str(config)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"toshokan: configuration error: keep.folder: {elsewhere} is not the root of a local "
        f"library the host serves (kept chapters would not be seen; libraries: local: {library})"
    ]
    config.write_text(f'{table}[keep]\nfolder = "{library}"\n')
    assert CliRunner().invoke(main, ["check-config", str(config)]).exit_code == 0
