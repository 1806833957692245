import { NonRetriableError, reasonCodes } from "../errors/index.ts";
import type { MultiValuedFormat } from "../runbook/model.ts";

/** A multi-valued cell that cannot be read in its declared format. Names the column, never the value (PII). */
export class MemberDataError extends NonRetriableError {
  constructor(
    readonly column: string,
    readonly format: MultiValuedFormat,
    detail: string,
  ) {
    super(reasonCodes.memberDataInvalid, `column "${column}" is not valid ${format}: ${detail}`);
  }
}
