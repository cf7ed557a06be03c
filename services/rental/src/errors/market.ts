import { localisedCodes } from './localised.ts'

/** The market: listings and cards, trials, ratings, the agents' record and incidents. */
export const marketErrors = localisedCodes({
  // the market
  listing_not_found: {
    status: 404,
    description: 'no such listing (or another organization’s, for a change)',
    ar: 'لا يوجد عرض بهذا المعرّف.',
  },
  listing_unavailable: {
    status: 409,
    description: 'the agent’s listing is unavailable (until the time named)',
    ar: 'عرض هذا الوكيل غير متاح حاليًا.',
  },
  listing_at_capacity: {
    status: 429,
    description:
      'the listing is limited and as many of its agent’s tasks as its cap are running (cap and count named): try again later',
    ar: 'العرض بلغ أقصى عدد من المهام الجارية: حاول لاحقًا.',
  },
  listing_card_changed: {
    status: 409,
    description:
      'the external agent’s card changed since it was listed (both hashes named): the provider publishes it again',
    ar: 'تغيّرت بطاقة الوكيل الخارجي منذ إدراجه: على المزوّد نشرها من جديد.',
  },
  agent_card_unreachable: {
    status: 422,
    description: 'the external agent’s card URL is refused (not https, not public) or did not answer a card',
    ar: 'تعذّر الوصول إلى بطاقة الوكيل أو عنوانها غير مقبول.',
  },
  agent_card_invalid: {
    status: 422,
    description: 'the fetched agent card is not a valid A2A 1.0 AgentCard (the field named)',
    ar: 'بطاقة الوكيل ليست بطاقة A2A صالحة.',
  },
  agent_card_signature_invalid: {
    status: 422,
    description: 'the agent card’s JWS signature does not verify (or its key cannot be found by jku and kid)',
    ar: 'توقيع بطاقة الوكيل لا يتحقق.',
  },
  agent_card_unsupported: {
    status: 422,
    description:
      'the card is valid but the rental cannot run the agent (no JSON-RPC 1.0 interface, no did:key for its results, a security scheme it cannot meet)',
    ar: 'البطاقة صالحة لكن الخدمة لا تستطيع تشغيل هذا الوكيل.',
  },
  agent_did_taken: {
    status: 409,
    description: 'the card names an agent DID another provider already publishes',
    ar: 'معرّف DID لهذا الوكيل ينشره مزوّد آخر بالفعل.',
  },
  // trials
  trial_not_found: {
    status: 404,
    description: 'no such trial of the organization',
    ar: 'لا توجد تجربة بهذا المعرّف لدى المؤسسة.',
  },
  trial_exists: {
    status: 409,
    description: 'the organization has a live trial of that listing already (named, with its state)',
    ar: 'لدى المؤسسة تجربة جارية لهذا العرض بالفعل.',
  },
  trial_exhausted: {
    status: 409,
    description: 'the trial’s free tasks are all used',
    ar: 'استُنفدت المهام المجانية في هذه التجربة.',
  },
  trial_expired: {
    status: 409,
    description: 'the trial’s window is over (its end named)',
    ar: 'انتهت مدة التجربة.',
  },
  trial_converted: {
    status: 409,
    description: 'the trial was converted into an engagement (named): it takes no more tasks',
    ar: 'تحوّلت التجربة إلى تعاقد ولا تقبل مهام أخرى.',
  },
  trial_changed: {
    status: 409,
    description: 'a trial task started while the trial was converting: convert again',
    ar: 'بدأت مهمة تجريبية أثناء تحويل التجربة: أعد التحويل.',
  },
  // ratings and references
  task_not_rateable: {
    status: 409,
    description: 'the task has not completed with a receipt (its state named): nothing to rate yet',
    ar: 'المهمة لم تكتمل بإيصال بعد: لا يوجد ما يُقيَّم.',
  },
  already_rated: {
    status: 409,
    description: 'the task is rated already: edit it (edit: true) within the window',
    ar: 'قُيّمت المهمة من قبل: عدّل التقييم خلال المهلة المسموحة.',
  },
  not_rated: {
    status: 409,
    description: 'an edit of a task that has no rating yet',
    ar: 'لا يوجد تقييم لهذه المهمة لتعديله.',
  },
  rating_edit_closed: {
    status: 409,
    description: 'the rating’s edit window closed (at the time named)',
    ar: 'انتهت مهلة تعديل التقييم.',
  },
  reference_not_allowed: {
    status: 409,
    description: 'the engagement has no completed task yet: a reference needs at least one',
    ar: 'لا توجد مهمة مكتملة في هذا التعاقد بعد: التزكية تتطلب مهمة واحدة على الأقل.',
  },
  // the agents' record
  invalid_agent_did: {
    status: 400,
    description: 'the agent DID is not an Ed25519 did:key',
    ar: 'معرّف الوكيل ليس did:key لمفتاح Ed25519.',
  },
  agent_not_found: {
    status: 404,
    description: 'the agent is neither in the catalogue nor known to the client',
    ar: 'الوكيل غير موجود في الكتالوج ولا معروف لدى العميل.',
  },
  unknown_framework: {
    status: 400,
    description: 'the evidence pack names a framework the rental does not map',
    ar: 'حزمة الأدلة تذكر إطارًا لا تدعمه الخدمة.',
  },
  // incidents
  incident_not_found: {
    status: 404,
    description: 'no such incident the caller may see (its reporter, the agent’s provider or an operator)',
    ar: 'لا توجد حادثة بهذا المعرّف يمكنك الاطلاع عليها.',
  },
  incident_state: {
    status: 409,
    description: 'the incident’s state (named) does not allow the move',
    ar: 'حالة الحادثة لا تسمح بهذا الإجراء.',
  },
})
