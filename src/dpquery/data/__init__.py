"""Layer 1: public domains, bit-packed data, encoding and decoding, synthetic generators."""

from dpquery.data.binary import BinaryData, load_binary, pack_columns, save_binary, unpack_columns
from dpquery.data.decode import DecodeReport, decode, sample_records
from dpquery.data.domain import Binary, Categorical, Domain, Numeric, infer_domain
from dpquery.data.encode import encode, encode_file, from_sparse, read_table, read_transactions
from dpquery.data.items import ItemSets, read_item_sets, write_item_sets
from dpquery.data.records import Records
from dpquery.data.sample import OutputReport, output_table, resample
from dpquery.data.synthetic import biased_bits, power_law_items

__all__ = [
    "Binary", "BinaryData", "Categorical", "DecodeReport", "Domain", "ItemSets", "Numeric",
    "OutputReport", "Records", "biased_bits", "decode", "encode", "encode_file", "from_sparse",
    "infer_domain", "load_binary", "output_table", "pack_columns", "power_law_items",
    "read_item_sets", "read_table", "read_transactions", "resample", "sample_records",
    "save_binary", "unpack_columns", "write_item_sets",
]  # fmt: skip
