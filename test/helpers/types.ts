/**
 * Type JSON the API suites use again and again (wire-reference 2.5; HDF5's predefined names):
 * one definition instead of a copy in each suite. Treat them as read-only.
 */

/** 32-bit little-endian signed integer. */
export const I32 = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
/** 64-bit little-endian IEEE float. */
export const F64 = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };
/** Variable-length UTF-8 string (h5py's `str`). */
export const VSTR = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
/** Fixed 4-byte ASCII string, null-padded. */
export const S4 = { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 };
