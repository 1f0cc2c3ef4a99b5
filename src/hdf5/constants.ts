/**
 * HDF5 constants used by h5store, in one place (DESIGN.md section 7 habit).
 *
 * Values are those of the HDF5 C headers (1.10 and later; they did not change in 1.12/1.14),
 * checked against Debian 12's libhdf5 1.10.8 headers with a small C program.
 */

export const H5P_DEFAULT = 0n;
export const H5S_ALL = 0n;
export const H5E_DEFAULT = 0n;
/** `H5S_UNLIMITED` as an hsize_t. */
export const H5S_UNLIMITED = 0xffffffffffffffffn;
/** `H5T_VARIABLE` as a size_t. */
export const H5T_VARIABLE = 0xffffffffffffffffn;
/** `HADDR_UNDEF`. */
export const HADDR_UNDEF = 0xffffffffffffffffn;

export const H5F_ACC_RDONLY = 0;
export const H5F_ACC_RDWR = 1;
export const H5F_ACC_TRUNC = 2;
export const H5F_ACC_EXCL = 4;
/** Open for reading while a SWMR writer writes (H5Fpublic.h). */
export const H5F_ACC_SWMR_READ = 0x40;
export const H5F_OBJ_ALL = 31;
export const H5F_CLOSE_WEAK = 1;
export const H5F_CLOSE_STRONG = 3;
export const H5F_FSPACE_STRATEGY_FSM_AGGR = 0;
export const H5F_FSPACE_STRATEGY_NONE = 3;
export const H5F_LIBVER_EARLIEST = 0;
export const H5F_LIBVER_V18 = 1;
export const H5F_LIBVER_V110 = 2;

export const H5_INDEX_NAME = 0;
export const H5_INDEX_CRT_ORDER = 1;
export const H5_ITER_INC = 0;
export const H5_ITER_DEC = 1;
export const H5_ITER_NATIVE = 2;

export const H5L_TYPE_HARD = 0;
export const H5L_TYPE_SOFT = 1;
export const H5L_TYPE_EXTERNAL = 64;

export const H5O_TYPE_GROUP = 0;
export const H5O_TYPE_DATASET = 1;
export const H5O_TYPE_NAMED_DATATYPE = 2;

export const H5O_INFO_BASIC = 1;
export const H5O_INFO_TIME = 2;
export const H5O_INFO_NUM_ATTRS = 4;
export const H5O_INFO_HDR = 8;
export const H5O_INFO_META_SIZE = 16;
/** `H5O_hdr_info_t.flags` bit: the object tracks attribute creation order (H5Opkg.h). */
export const H5O_HDR_ATTR_CRT_ORDER_TRACKED = 0x04;

/** Datatype classes (`H5T_class_t`). */
export const H5T_INTEGER = 0;
export const H5T_FLOAT = 1;
export const H5T_TIME = 2;
export const H5T_STRING = 3;
export const H5T_BITFIELD = 4;
export const H5T_OPAQUE = 5;
export const H5T_COMPOUND = 6;
export const H5T_REFERENCE = 7;
export const H5T_ENUM = 8;
export const H5T_VLEN = 9;
export const H5T_ARRAY = 10;

export const H5T_ORDER_LE = 0;
export const H5T_ORDER_BE = 1;
export const H5T_SGN_NONE = 0;
export const H5T_SGN_2 = 1;
export const H5T_STR_NULLTERM = 0;
export const H5T_STR_NULLPAD = 1;
export const H5T_STR_SPACEPAD = 2;
export const H5T_CSET_ASCII = 0;
export const H5T_CSET_UTF8 = 1;
export const H5T_NORM_IMPLIED = 0;
export const H5T_NORM_MSBSET = 1;
export const H5T_NORM_NONE = 2;
export const H5T_PAD_ZERO = 0;
export const H5T_DIR_DEFAULT = 0;

export const H5S_SCALAR = 0;
export const H5S_SIMPLE = 1;
export const H5S_NULL = 2;
export const H5S_SELECT_SET = 0;
export const H5S_SELECT_OR = 1;
export const H5S_SEL_NONE = 0;
export const H5S_SEL_POINTS = 1;
export const H5S_SEL_HYPERSLABS = 2;
export const H5S_SEL_ALL = 3;

export const H5R_OBJECT = 0;
export const H5R_DATASET_REGION = 1;

export const H5D_COMPACT = 0;
export const H5D_CONTIGUOUS = 1;
export const H5D_CHUNKED = 2;
export const H5D_VIRTUAL = 3;
export const H5D_FILL_VALUE_UNDEFINED = 0;
export const H5D_FILL_VALUE_DEFAULT = 1;
export const H5D_FILL_VALUE_USER_DEFINED = 2;
export const H5D_FILL_TIME_ALLOC = 0;
export const H5D_FILL_TIME_NEVER = 1;
export const H5D_FILL_TIME_IFSET = 2;
export const H5D_ALLOC_TIME_DEFAULT = 0;
export const H5D_ALLOC_TIME_EARLY = 1;
export const H5D_ALLOC_TIME_LATE = 2;
export const H5D_ALLOC_TIME_INCR = 3;

export const H5Z_FILTER_DEFLATE = 1;
export const H5Z_FILTER_SHUFFLE = 2;
export const H5Z_FILTER_FLETCHER32 = 3;
export const H5Z_FILTER_SZIP = 4;
export const H5Z_FILTER_NBIT = 5;
export const H5Z_FILTER_SCALEOFFSET = 6;
/** Registered plugin filters (The HDF Group's list) that h5store knows the options of. */
export const H5Z_FILTER_BITSHUFFLE = 32008;
export const H5Z_FILTER_ZFP = 32013;
export const H5Z_FILTER_ZSTD = 32015;
export const H5Z_FLAG_MANDATORY = 0;
export const H5Z_FLAG_OPTIONAL = 1;
export const H5Z_SO_FLOAT_DSCALE = 0;
export const H5Z_SO_INT = 2;
export const H5Z_FILTER_CONFIG_ENCODE_ENABLED = 1;
export const H5Z_FILTER_CONFIG_DECODE_ENABLED = 2;

export const H5E_WALK_DOWNWARD = 1;

/** Names of the layout classes as the REST API spells them. */
export const LAYOUT_NAMES: Record<number, string> = {
  [H5D_COMPACT]: 'H5D_COMPACT',
  [H5D_CONTIGUOUS]: 'H5D_CONTIGUOUS',
  [H5D_CHUNKED]: 'H5D_CHUNKED',
  [H5D_VIRTUAL]: 'H5D_VIRTUAL',
};
export const FILL_TIME_NAMES: Record<number, string> = {
  [H5D_FILL_TIME_ALLOC]: 'H5D_FILL_TIME_ALLOC',
  [H5D_FILL_TIME_NEVER]: 'H5D_FILL_TIME_NEVER',
  [H5D_FILL_TIME_IFSET]: 'H5D_FILL_TIME_IFSET',
};
export const ALLOC_TIME_NAMES: Record<number, string> = {
  [H5D_ALLOC_TIME_DEFAULT]: 'H5D_ALLOC_TIME_DEFAULT',
  [H5D_ALLOC_TIME_EARLY]: 'H5D_ALLOC_TIME_EARLY',
  [H5D_ALLOC_TIME_LATE]: 'H5D_ALLOC_TIME_LATE',
  [H5D_ALLOC_TIME_INCR]: 'H5D_ALLOC_TIME_INCR',
};

/**
 * Known filters: (id, REST class name, short name). Wire-reference 3.4; plugin ids are those
 * registered with The HDF Group.
 */
export const FILTERS: { id: number; cls: string; name: string }[] = [
  { id: 1, cls: 'H5Z_FILTER_DEFLATE', name: 'gzip' },
  { id: 2, cls: 'H5Z_FILTER_SHUFFLE', name: 'shuffle' },
  { id: 3, cls: 'H5Z_FILTER_FLETCHER32', name: 'fletcher32' },
  { id: 4, cls: 'H5Z_FILTER_SZIP', name: 'szip' },
  { id: 5, cls: 'H5Z_FILTER_NBIT', name: 'nbit' },
  { id: 6, cls: 'H5Z_FILTER_SCALEOFFSET', name: 'scaleoffset' },
  { id: 307, cls: 'H5Z_FILTER_BZIP2', name: 'bzip2' },
  { id: 32000, cls: 'H5Z_FILTER_LZF', name: 'lzf' },
  { id: 32001, cls: 'H5Z_FILTER_BLOSC', name: 'blosclz' },
  { id: 32003, cls: 'H5Z_FILTER_SNAPPY', name: 'snappy' },
  { id: 32004, cls: 'H5Z_FILTER_LZ4', name: 'lz4' },
  { id: 32005, cls: 'H5Z_FILTER_LZ4HC', name: 'lz4hc' },
  { id: 32008, cls: 'H5Z_FILTER_BITSHUFFLE', name: 'bitshuffle' },
  { id: 32013, cls: 'H5Z_FILTER_ZFP', name: 'zfp' },
  { id: 32015, cls: 'H5Z_FILTER_ZSTD', name: 'zstd' },
];

/**
 * The creation-order flags of objects h5store creates (issue #25): creation order is always
 * tracked (H5P_CRT_ORDER_TRACKED, as HSDS stamps every link and attribute with its time), and
 * also indexed when the client asked for it (`CreateOrder`, h5py's `track_order=True`:
 * H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED). Only the asked-for form reports `CreateOrder`.
 */
export function creationOrderFlags(asked: boolean | undefined): number {
  return asked ? 3 : 1;
}
