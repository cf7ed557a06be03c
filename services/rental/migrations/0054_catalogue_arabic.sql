-- The catalogue's own words in Arabic beside the English: a job's title, outcome and description,
-- an agent's display name and description, a built-in role's description. Null where no Arabic
-- was given (an external agent, a custom role): readers then get the English.
alter table jobs add column title_ar text;
alter table jobs add column outcome_ar text;
alter table jobs add column description_ar text;
alter table agents add column name_ar text;
alter table agents add column description_ar text;
alter table rental_roles add column description_ar text;

update rental_roles set description_ar = 'كل الصلاحيات، ويعيّن مالكين آخرين' where name = 'owner' and org_id is null;
update rental_roles set description_ar = 'كل الصلاحيات عدا تعيين المالكين' where name = 'admin' and org_id is null;
update rental_roles set description_ar = 'يستأجر الوكلاء ويشغّل المهام' where name = 'member' and org_id is null;
update rental_roles set description_ar = 'الاطلاع على الأموال وصرف المدفوعات فقط' where name = 'billing' and org_id is null;
update rental_roles set description_ar = 'اطلاع فقط' where name = 'viewer' and org_id is null;

-- An organization made at a first sign-in is named after its owner's email in both languages; a
-- name a person types replaces both (name_ar back to null).
alter table orgs add column name_ar text;
