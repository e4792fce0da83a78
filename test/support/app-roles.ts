/**
 * What the Function App's identity is granted, as the infra tests expect it both in the Bicep
 * source and in the compiled template: least privilege, named once.
 */

/** The Cosmos DB data actions of the app's custom role (items, queries, change feed, scripts; no container management). */
export const APP_COSMOS_DATA_ACTIONS = [
  "items/create",
  "items/read",
  "items/replace",
  "items/upsert",
  "items/delete",
  "executeQuery",
  "readChangeFeed",
  "executeStoredProcedure",
  "readMetadata",
];

/** Storage Blob Data Owner, Storage Queue Data Contributor, Storage Table Data Contributor (AzureWebJobsStorage__*). */
export const APP_STORAGE_ROLES = ["b7e6dc6d-f1e8-4753-8033-0f276bb0955b", "974c5e8b-45b9-4653-ba55-5f855dd0fb88", "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3"];
