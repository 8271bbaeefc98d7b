# Input functions of the downloads and datasets (rules/datasets.smk); included by rules/common.smk.


def download_mirror_file(wildcards):
    """The mirror's copy of a download, as the fetch job's input (none: the job downloads it)."""
    download = MANIFEST.downloads[wildcards.download]
    if wildcards.filename != download.filename:
        raise InputError(f"download {download.key} is stored as {download.filename}, not {wildcards.filename}")
    mirror_file = mirror_download_file(download, MIRROR_DIR)
    return [mirror_file] if mirror_file else []


def download_fetch_params(wildcards):
    """URL, checksum and mirror copy of a download (a manifest edit reruns exactly that download)."""
    download = MANIFEST.downloads[wildcards.download]
    checksum = download.checksum
    mirror_file = mirror_download_file(download, MIRROR_DIR)
    if is_mirror_substitute(download, mirror_file, MIRROR_DIR):
        # not the canonical bytes: checked against the substitute's own digest, never recorded in the lock
        substitute = download.mirror_substitute
        checksum = Checksum("sha256", substitute.sha256, f"sha256 of the mirror's substitute (downloads.{download.key}): {substitute.description}")
    return {
        "url": download.url,
        "checksum": None if checksum is None else {"algorithm": checksum.algorithm, "hexdigest": checksum.hexdigest, "source": checksum.source},
        "mirror_file": mirror_file,
        "mirror_looked_for": str(Path(MIRROR_DIR) / download.mirror) if MIRROR_DIR and download.mirror else None,
    }


def downloaded_archive(wildcards):
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[wildcards.archive_download])


def dataset_inputs(wildcards):
    """Files a dataset is parsed from: mirror files, or downloaded files and extraction directories."""
    return list(DATASET_PLANS[wildcards.dataset].inputs)


def dataset_provenance(wildcards):
    """The canonical downloads of a dataset, whichever copy is read (recorded beside its table)."""
    dataset = MANIFEST.datasets[wildcards.dataset]
    keys = dict.fromkeys(ref.download for ref in dataset.download.files.values())
    return [
        {"download": key, "url": MANIFEST.downloads[key].url, "checksum_source": MANIFEST.downloads[key].checksum_source}
        for key in keys
    ]
