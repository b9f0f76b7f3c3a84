DROP INDEX `jobs_listed_type_workplace_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_listed_department_type_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_listed_department_workplace_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_listed_department_type_workplace_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_status_type_workplace_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_status_department_type_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_status_department_workplace_idx` ON `jobs`;--> statement-breakpoint
DROP INDEX `jobs_status_department_type_workplace_idx` ON `jobs`;