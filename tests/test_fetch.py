"""``countercase fetch-sc`` against a local S3 server (moto in server mode) holding a bucket built
from the real PDFs and metadata records, with faults injected by a proxy in front of it:
dropped connections mid-body, a file that never comes whole, a truncated local copy, a changed
object, a year missing upstream. Nothing half-written is ever read, and a second run fetches
nothing new."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import socket
import tarfile
import threading
from pathlib import Path
from urllib.parse import unquote

import pytest

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

from countercase.fetch.s3 import FetchError, anonymous_client, fetch_years, parse_years  # noqa: E402
from countercase.ingest.document import Document  # noqa: E402
from countercase.ingest.sc_opendata import ScOpenDataSource  # noqa: E402

BUCKET = "indian-supreme-court-judgments"
TAR_2019 = "data/tar/year=2019/english/english.tar"
TAR_2020 = "data/tar/year=2020/english/english.tar"
META_2019 = "metadata/json/year=2019/records.json"
META_2020 = "metadata/json/year=2020/records.json"


class DroppingProxy:
    """A TCP proxy to the S3 server that cuts the response of chosen requests after
    ``keep`` bytes: ``drops[key]`` is how many more GETs of that key to cut (-1: all)."""

    def __init__(self, target: int, keep: int = 4000) -> None:
        self.target, self.keep = target, keep
        self.drops: dict[str, int] = {}
        self.gets: list[str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target))
        try:
            while True:
                request = client.recv(65536)
                if not request:
                    return
                line = request.split(b"\r\n", 1)[0].decode("latin-1")
                cut = False
                if line.startswith("GET ") and "list-type" not in line:
                    path = unquote(line.split()[1].split("?")[0])
                    key = path.split(f"/{BUCKET}/", 1)[-1]
                    self.gets.append(key)
                    left = self.drops.get(key, 0)
                    if left:
                        cut = True
                        self.drops[key] = left - 1 if left > 0 else -1
                upstream.sendall(request)
                if cut:
                    sent = 0
                    while sent < self.keep:
                        data = upstream.recv(min(65536, self.keep - sent))
                        if not data:
                            break
                        client.sendall(data)
                        sent += len(data)
                    return  # the connection drops mid-body
                upstream.settimeout(0.3)
                while True:  # relay the whole response (it ends when the server goes quiet)
                    try:
                        data = upstream.recv(65536)
                    except socket.timeout:
                        break
                    if not data:
                        return
                    client.sendall(data)
                upstream.settimeout(None)
        finally:
            client.close()
            upstream.close()

    def close(self) -> None:
        self.server.close()


def _tar(pdfs: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for pdf in pdfs:
            archive.add(pdf, arcname=pdf.name)
    return buffer.getvalue()


def _records(raw_dir: Path, year: int, n: int) -> bytes:
    path = raw_dir / "sc_metadata" / "raw" / f"01-01-{year}-31-12-{year}.json.gz"
    data = json.load(gzip.open(path))["data"][:n]
    return json.dumps(data).encode()


@pytest.fixture(scope="module")
def s3(raw_dir, pdf_dir):
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server._server.server_port
    admin = boto3.client("s3", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{port}",
                         aws_access_key_id="test", aws_secret_access_key="test")
    admin.create_bucket(Bucket=BUCKET)
    admin.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps({  # public, as the real one is
        "Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]}]}))
    pdfs = sorted(pdf_dir.glob("*.pdf"))
    objects = {TAR_2019: _tar(pdfs[:2]), TAR_2020: _tar(pdfs[4:5]),
               META_2019: _records(raw_dir, 2019, 20), META_2020: _records(raw_dir, 2020, 20)}
    for key, body in objects.items():
        admin.put_object(Bucket=BUCKET, Key=key, Body=body)
    proxy = DroppingProxy(port)
    yield {"admin": admin, "proxy": proxy, "objects": objects,
           "client": anonymous_client(f"http://127.0.0.1:{proxy.port}", retries=2)}
    proxy.close()
    server.stop()


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_years_are_parsed_and_bad_ones_named():
    assert parse_years("2015-2017") == [2015, 2016, 2017]
    assert parse_years("2001, 2003-2004,2001") == [2001, 2003, 2004]
    for bad in ("20x", "2020-2019", "", "1800"):
        with pytest.raises(FetchError, match="--years"):
            parse_years(bad)


def test_faults_lose_nothing_and_a_second_run_fetches_nothing(s3, tmp_path):
    proxy, objects = s3["proxy"], s3["objects"]
    dest = tmp_path / "sc"
    proxy.drops = {TAR_2019: 2}  # the first two GETs of this tar are cut mid-body
    (dest / TAR_2020).parent.mkdir(parents=True)
    (dest / (TAR_2020 + ".part")).write_bytes(objects[TAR_2020][:1500])  # an earlier run's part
    (dest / META_2019).parent.mkdir(parents=True)
    (dest / META_2019).write_bytes(objects[META_2019][:100])  # a damaged finished file

    report = fetch_years([2019, 2020, 2021], dest, s3["client"], retries=4, sleep=lambda s: None)

    assert report.missing_years == [2021] and not report.failures
    assert set(report.resumed) == {TAR_2019, TAR_2020}  # continued, not started over
    assert set(report.fetched) == {META_2019, META_2020}
    for key, body in objects.items():
        assert _md5((dest / key).read_bytes()) == _md5(body), key
    assert not list(dest.rglob("*.part"))
    outcomes = [json.loads(line) for line in (dest / ".fetch" / "log.jsonl").open()]
    assert {o["key"] for o in outcomes} == set(objects)

    proxy.gets.clear()
    again = fetch_years([2019, 2020], dest, s3["client"], sleep=lambda s: None)
    assert sorted(again.skipped) == sorted(objects) and not again.fetched and not again.resumed
    assert proxy.gets == []  # nothing was downloaded

    documents = [d for d in ScOpenDataSource(dest) if isinstance(d, Document)]
    assert len(documents) == 3 and all(d.pages for d in documents)  # the layout ingest reads


def test_a_file_that_never_comes_whole_is_reported_and_never_named(s3, tmp_path):
    proxy = s3["proxy"]
    dest = tmp_path / "sc"
    proxy.drops = {TAR_2019: -1}  # every GET of it is cut
    report = fetch_years([2019], dest, s3["client"], retries=3, sleep=lambda s: None)
    proxy.drops = {}
    assert [f["key"] for f in report.failures] == [TAR_2019]
    assert "after 3 tries" in report.failures[0]["reason"]
    assert not (dest / TAR_2019).exists()  # never under its final name
    assert (dest / (TAR_2019 + ".part")).exists()
    assert [d for d in ScOpenDataSource(dest) if isinstance(d, Document)] == []  # nothing read
    resumed = fetch_years([2019], dest, s3["client"], sleep=lambda s: None)
    assert resumed.resumed == [TAR_2019] and not resumed.failures


def test_a_changed_object_is_fetched_anew_not_spliced(s3, tmp_path):
    admin, objects = s3["admin"], s3["objects"]
    dest = tmp_path / "sc"
    (dest / META_2020).parent.mkdir(parents=True)
    (dest / (META_2020 + ".part")).write_bytes(b'{"stale": "bytes of an older version"')
    changed = objects[META_2020].replace(b"diary_no", b"diary_No")
    admin.put_object(Bucket=BUCKET, Key=META_2020, Body=changed)
    try:
        report = fetch_years([2020], dest, s3["client"], retries=3, sleep=lambda s: None)
        assert not report.failures
        assert _md5((dest / META_2020).read_bytes()) == _md5(changed)
    finally:
        admin.put_object(Bucket=BUCKET, Key=META_2020, Body=objects[META_2020])


def test_the_command_names_bad_input(run_cli, tmp_path):
    code, _, err = run_cli("fetch-sc", "--years", "2020-2019", "--dest", str(tmp_path))
    assert code == 2 and "--years" in err
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli("fetch-sc", "--years", "2020", "--dest", str(tmp_path / "file"))
    assert code == 2 and "is a file" in err
