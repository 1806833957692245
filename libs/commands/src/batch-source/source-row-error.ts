import { NonRetriableError, reasonCodes } from "@matoolkit/domain";

/**
 * A source row the scheduler cannot use. The message names the row number (1-based, in result
 * order) and the column, never the value: it lands in runbooks.last_error and the API, and the
 * value may be a member's email.
 */
export class SourceRowError extends NonRetriableError {
  constructor(message: string) {
    super(reasonCodes.memberDataInvalid, message);
  }
}
