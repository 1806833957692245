// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "coverage/**", ".matoolkit/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      // Libraries never read the environment: only entry points (main.ts, CLIs, scripts, tests) may.
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message: "Only entry points read process.env; pass config in.",
        },
      ],
    },
  },
  {
    files: [
      "services/*/src/main.ts",
      "services/*/src/*-cli.ts",
      "scripts/**",
      "bench/**",
      "libs/testing/**",
      "libs/*/test/**",
      "services/*/test/**",
      "**/*.test.ts",
      "vitest.config.ts",
    ],
    rules: { "no-restricted-properties": "off" },
  },
  {
    // Tests inspect arbitrary JSON responses; typing every body would add noise, not safety.
    files: ["**/*.test.ts", "**/*.scenarios.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
