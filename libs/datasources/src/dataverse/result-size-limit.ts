/**
 * The Dataverse TDS endpoint returns at most 80 MB per query ("Use SQL to query data",
 * Limitations: https://learn.microsoft.com/power-apps/developer/data-platform/dataverse-sql-query#limitations).
 * Over it, the endpoint answers with an error whose text Microsoft documents, but not its number:
 * "Return records size cannot exceed 83886080" (Power BI Dataverse connector, Troubleshooting:
 * https://learn.microsoft.com/power-apps/maker/data-platform/data-platform-powerbi-connector#error-message-return-records-size-cannot-exceed-83886080).
 * Hence a match on the text.
 */
const resultSizeLimitText = /return records size cannot exceed/iu;

export function isResultSizeLimitError(error: unknown): boolean {
  return error instanceof Error && resultSizeLimitText.test(error.message);
}

/**
 * What the operator can do, in the order Microsoft suggests it (fewer columns, fewer rows), within
 * the 200 characters an error message keeps. The runbook's query is not paged here: see
 * dataverse-source.ts for why.
 */
export const resultTooLargeProblem =
  "query failed: result exceeds the Dataverse TDS endpoint's 80 MB limit; " +
  "select fewer columns (multi-line text, choice labels) or fewer rows (WHERE; split by key range)";
