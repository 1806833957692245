import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";

/**
 * Runs a write and, when Exchange says an address is taken, rethrows it as a permanent
 * exchange.conflict naming the function's parameter (not the address), so an operator knows which
 * input to fix. Other errors pass through as the adapter mapped them.
 */
export async function explainConflict<T>(
  functionName: string,
  parameterName: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof MatoolkitError && error.reason === reasonCodes.exchangeConflict) {
      throw new NonRetriableError(
        reasonCodes.exchangeConflict,
        `${functionName}: ${parameterName} is already used by another recipient (${error.message})`,
        { cause: error },
      );
    }
    throw error;
  }
}
