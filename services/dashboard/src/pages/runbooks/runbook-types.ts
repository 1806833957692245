/** Wire shapes of the runbook endpoints (services/admin-api/src/read-models/runbook-schemas.ts). */
export interface Runbook {
  readonly id: number;
  readonly name: string;
  readonly version: number;
  readonly isActive: boolean;
  readonly overdueBehavior: "rerun" | "ignore";
  readonly rerunInit: boolean;
  readonly createdAt: string;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
}

export interface RunbookWithYaml extends Runbook {
  readonly yamlContent: string;
}

export interface AutomationSettings {
  readonly runbookName: string;
  readonly automationEnabled: boolean;
  readonly enabledAt: string | null;
  readonly enabledBy: string | null;
  readonly disabledAt: string | null;
  readonly disabledBy: string | null;
}

export interface QueryPreview {
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly automationEnabled: boolean;
  readonly limit: number;
  readonly rows: readonly Record<string, unknown>[];
  readonly batches: readonly {
    readonly batchStartTime: string;
    readonly memberCount: number;
    readonly batchId: number | null;
    readonly batchStatus: string | null;
  }[];
  readonly rowsInManualBatches: number;
}

export function runbookHref(name: string, version?: number): string {
  const base = `#/runbooks/${encodeURIComponent(name)}`;
  return version === undefined ? base : `${base}?version=${version}`;
}
