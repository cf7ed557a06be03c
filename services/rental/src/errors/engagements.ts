import { localisedCodes } from './localised.ts'

/** Engagements and the work in them: tasks, batches, approvals, capacity, agent versions and teams. */
export const engagementErrors = localisedCodes({
  // catalogue and engagements
  job_not_found: {
    status: 404,
    description: 'no such job in the catalogue',
    ar: 'لا توجد مهمة بهذا المعرّف في الكتالوج.',
  },
  agent_not_serving: {
    status: 400,
    description: 'the agent does not serve that job',
    ar: 'هذا الوكيل لا ينفّذ هذه المهمة.',
  },
  client_did_required: {
    status: 400,
    description: 'the session has no client DID: give client_did',
    ar: 'الجلسة لا تحمل معرّف DID للعميل: أرسل client_did.',
  },
  invalid_client_did: {
    status: 400,
    description: 'client_did is not a did:key of an Ed25519 key',
    ar: 'قيمة client_did ليست did:key لمفتاح Ed25519.',
  },
  engagement_not_found: {
    status: 404,
    description: 'no such engagement of the signed-in client',
    ar: 'لا يوجد تعاقد بهذا المعرّف لدى مؤسستك.',
  },
  engagement_not_active: {
    status: 409,
    description: 'the engagement’s SLA is not signed yet',
    ar: 'اتفاقية مستوى الخدمة لهذا التعاقد لم تُوقَّع بعد.',
  },
  engagement_ended: {
    status: 409,
    description: 'the engagement has ended: it takes no new task, its config no longer changes, it ends once',
    ar: 'انتهى التعاقد: لا يقبل مهام جديدة ولا تتغير إعداداته.',
  },
  nothing_to_change: {
    status: 400,
    description: 'the config change names no field',
    ar: 'الطلب لا يذكر أي حقل لتغييره.',
  },
  invalid_config: {
    status: 400,
    description: 'the config fields do not fit together (named in the message)',
    ar: 'حقول الإعدادات لا تتوافق فيما بينها.',
  },
  precondition_failed: {
    status: 412,
    description: 'If-Match names another version than the current one',
    ar: 'ترويسة If-Match تشير إلى نسخة غير النسخة الحالية.',
  },
  nothing_to_sign: {
    status: 400,
    description: 'neither an SLA nor an escrow signature was given',
    ar: 'لم يُرسل توقيع لاتفاقية الخدمة ولا للضمان.',
  },
  unknown_escrow: {
    status: 400,
    description: 'a signature names an escrow the engagement does not have',
    ar: 'أحد التوقيعات يشير إلى ضمان لا ينتمي إلى هذا التعاقد.',
  },
  bad_signature: {
    status: 400,
    description: 'a signature is not the client’s over the body it names',
    ar: 'التوقيع ليس توقيع العميل على النص المذكور.',
  },
  // tasks
  task_not_found: {
    status: 404,
    description: 'no such task of the signed-in client',
    ar: 'لا توجد مهمة بهذا المعرّف لدى مؤسستك.',
  },
  invalid_text: {
    status: 400,
    description: 'the task text is empty',
    ar: 'نص المهمة فارغ.',
  },
  task_price_over_limit: {
    status: 409,
    description: 'the task’s price exceeds the engagement’s max_task_price_fils',
    ar: 'سعر المهمة يتجاوز الحد الأقصى المحدد في التعاقد.',
  },
  task_not_cancelable: {
    status: 409,
    description: 'the task has ended (its state named): it cannot be canceled',
    ar: 'انتهت المهمة ولا يمكن إلغاؤها.',
  },
  task_not_retryable: {
    status: 409,
    description: 'only a failed task whose input is still kept is retried (its state named)',
    ar: 'لا تُعاد إلا المهمة الفاشلة التي ما زال نصها محفوظًا.',
  },
  // batches
  batch_not_found: {
    status: 404,
    description: 'no such batch of the signed-in client',
    ar: 'لا توجد دفعة مهام بهذا المعرّف لدى مؤسستك.',
  },
  // approvals
  approval_not_found: {
    status: 404,
    description: 'no such approval of the organization',
    ar: 'لا توجد موافقة بهذا المعرّف في المؤسسة.',
  },
  approval_not_pending: {
    status: 409,
    description: 'the approval is no longer pending (its state named: approved, rejected, expired, canceled)',
    ar: 'لم تعد الموافقة معلّقة.',
  },
  approval_self_decision: {
    status: 403,
    description:
      'the engagement’s approval policy asks for a separate approver (separate_approver): the member who made the task cannot approve it',
    ar: 'تشترط سياسة الموافقة في هذا التعاقد موافِقًا آخر: لا يمكن للعضو الذي أنشأ المهمة أن يوافق عليها.',
  },
  agent_revoked: {
    status: 409,
    description: 'the client revoked the agent: it takes no new task',
    ar: 'ألغى العميل هذا الوكيل: لا يقبل مهام جديدة.',
  },
  // capacity and agent versions
  capacity_exceeded: {
    status: 429,
    description:
      'the engagement is at its max_concurrent_tasks or tasks_per_minute (named): try again after Retry-After',
    ar: 'بلغ التعاقد حده الأقصى من المهام: حاول مرة أخرى بعد المهلة المذكورة في Retry-After.',
  },
  capacity_over_listing: {
    status: 409,
    description: 'max_concurrent_tasks is above the cap of the agent’s limited market listing (named)',
    ar: 'الحد الأقصى للمهام المتزامنة أعلى من حد عرض الوكيل في السوق.',
  },
  invalid_version: {
    status: 400,
    description: 'the version is not a SemVer 2.0.0 version',
    ar: 'رقم الإصدار ليس إصدار SemVer 2.0.0 صالحًا.',
  },
  version_conflict: {
    status: 409,
    description: 'the version is released already, or not above the agent’s latest (named)',
    ar: 'هذا الإصدار منشور من قبل أو ليس أحدث من آخر إصدار للوكيل.',
  },
  version_not_pending: {
    status: 409,
    description:
      'no newer version waits for the engagement (its version named), or the addendum is not the pending one’s',
    ar: 'لا يوجد إصدار أحدث بانتظار هذا التعاقد، أو الملحق ليس الملحق المعلّق.',
  },
  // teams
  team_not_found: {
    status: 404,
    description: 'no team with that id in the organization',
    ar: 'لا يوجد فريق بهذا المعرّف في مؤسستك.',
  },
  team_task_not_found: {
    status: 404,
    description: 'no task of that team with that id',
    ar: 'لا توجد مهمة لهذا الفريق بهذا المعرّف.',
  },
  invalid_team: {
    status: 400,
    description:
      'the team terms do not hold: a duplicate member, the lead among its members, shares over 100 %, a delegation naming an agent outside the team (named)',
    ar: 'شروط الفريق غير صحيحة: عضو مكرر، أو القائد بين الأعضاء، أو حصص تتجاوز 100٪، أو تفويض لوكيل من خارج الفريق.',
  },
  unknown_team_agent: {
    status: 404,
    description: 'a member (named) is not an agent in the catalogue',
    ar: 'أحد الأعضاء (المذكور) ليس وكيلًا في الكتالوج.',
  },
  team_not_hired: {
    status: 409,
    description: 'the team is not hired (its state named): hire it first',
    ar: 'الفريق غير مستأجر بعد (حالته مذكورة): استأجره أولًا.',
  },
  team_already_hired: {
    status: 409,
    description: 'the team is hired or ended already (its state named)',
    ar: 'الفريق مستأجر أو منتهٍ بالفعل (حالته مذكورة).',
  },
  team_ended: {
    status: 409,
    description: 'the team is ended (since when named)',
    ar: 'انتهى الفريق (موعد انتهائه مذكور).',
  },
})
