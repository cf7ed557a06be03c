import { errorCatalogue, httpErrorCodes } from '@svc/kit'

/** Every `error.code` the ledger answers, with its status (listed in the OpenAPI document). */
export const ledgerErrors = errorCatalogue({
  // what any route may answer (the kit's HTTP layer)
  ...httpErrorCodes,
  not_found: { status: 404, description: 'no such route, tile or webhook' },
  unauthorized: { status: 401, description: 'a writer bearer token (LEDGER_WRITERS) is required' },
  // appending
  malformed_receipt: {
    status: 400,
    description: 'the receipt is not one the log takes (date, issuer, canonical form)',
  },
  bad_signature: {
    status: 400,
    description: 'a signature (the receipt’s, or a witness’s cosignature) does not verify',
  },
  receipt_too_large: { status: 400, description: 'the receipt is larger than 16 KiB in canonical form' },
  // reading
  unknown_index: { status: 404, description: 'no entry at that index' },
  unknown_size: { status: 404, description: 'no checkpoint of that tree size' },
  size_beyond_tree: { status: 400, description: 'the tree size is beyond the latest checkpoint' },
  no_checkpoint_for_size: {
    status: 400,
    description:
      'no checkpoint was published for that tree size (a bundle needs one): the message names the nearest',
  },
  invalid_sizes: { status: 400, description: 'the sizes of a consistency proof are out of order or range' },
  invalid_query: { status: 400, description: 'a search names neither a subject nor an issuer' },
  // witnesses
  malformed_note: { status: 400, description: 'the body is not a checkpoint note' },
  checkpoint_mismatch: {
    status: 400,
    description: 'the checkpoint text differs from the one this log signed',
  },
  no_known_witness: { status: 400, description: 'the note carries no cosignature from a configured witness' },
})

export const ledgerError = ledgerErrors.error
