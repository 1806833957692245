/** Tests: the error a query rejects with (fails the test if it resolves). */
export async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the query to fail, but it returned rows");
}
