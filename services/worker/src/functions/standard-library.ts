import { createEntraFunctions } from "./entra/index.ts";
import { createExchangeFunctions } from "./exchange/index.ts";
import type { FunctionModule } from "./worker-function.ts";

/**
 * 000's standard library: the Entra functions (Microsoft Graph) and the Exchange functions
 * (Exchange Online admin API), each module built fresh per worker registry.
 */
export function createStandardLibrary(): FunctionModule[] {
  return [createEntraFunctions(), createExchangeFunctions()];
}
