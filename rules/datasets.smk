# Data acquisition: every file of the manifest comes from the offline mirror when it holds it,
# otherwise from its canonical URL; downloads are checksummed, written atomically, extracted safely.

from nlp_robustness.outputs.report_sections import DATA as DATA_SECTION

# Compute nodes of a cluster often have no internet access: downloads run on the submitting host.
localrules:
    fetch_download,


rule fetch_download:
    """Download one file of the manifest (or copy it from the mirror), verify its checksum, write it atomically.

    Files without a published checksum are trusted on first use: their sha256 is recorded in the
    checksum lock and every later download must match it.
    """
    input:
        download_mirror_file,
    output:
        "resources/downloads/{download}/{filename}",
    log:
        "logs/fetch_download/{download}/{filename}.log",
    benchmark:
        "logs/benchmarks/fetch_download/{download}/{filename}.tsv",
    params:
        source=download_fetch_params,
        checksum_lock=CHECKSUM_LOCK,  # relative to the workflow directory, so a moved project reruns nothing
        timeout_seconds=DOWNLOAD["timeout_seconds"],
        retries=DOWNLOAD["retries"],
        retry_wait_seconds=DOWNLOAD["retry_wait_seconds"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=120,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/fetch_download.py"


rule extract_download:
    """Extract the members the manifest reads from one archive (names checked, regular files only)."""
    input:
        downloaded_archive,
    output:
        directory("resources/downloads/{archive_download}/extracted"),
    log:
        "logs/extract_download/{archive_download}.log",
    benchmark:
        "logs/benchmarks/extract_download/{archive_download}.tsv",
    params:
        members=lambda wildcards: MANIFEST.members_of(wildcards.archive_download),
        archive_kind=lambda wildcards: MANIFEST.downloads[wildcards.archive_download].archive,
    threads: 1
    resources:
        mem_mb=500,
        runtime=60,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/extract_download.py"


rule prepare_dataset:
    """Parse one dataset (mirror or downloaded copy) into a verified table, with a provenance record."""
    input:
        dataset_inputs,
    output:
        table="results/datasets/{dataset}.tsv",
        provenance="results/datasets/{dataset}.provenance.json",
    log:
        "logs/prepare_dataset/{dataset}.log",
    benchmark:
        "logs/benchmarks/prepare_dataset/{dataset}.tsv",
    params:
        plan=lambda wildcards: DATASET_PLANS[wildcards.dataset].as_params(),
        canonical_downloads=dataset_provenance,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/prepare_dataset.py"


rule dataset_summary:
    """One row per dataset the config uses: origin (mirror or download), size, canonical URL, checksum source."""
    input:
        expand("results/datasets/{dataset}.provenance.json", dataset=ACQUIRED_DATASETS),
    output:
        csv="results/tables/datasets.csv",
        html=report("results/tables/datasets.html", caption="../report/datasets.rst", category=DATA_SECTION, subcategory="datasets"),
        markdown="results/tables/datasets.md",
    log:
        "logs/dataset_summary.log",
    benchmark:
        "logs/benchmarks/dataset_summary.tsv",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/dataset_summary.py"
